"""A small XML writer for reports: the text `xml.etree.ElementTree.indent` + `tostring` would
produce for the same tree (two-space indentation, `<a />` for an empty element, attributes in
insertion order, the same escaping, a UTF-8 declaration), written as text directly: building an
element tree and walking it again to clean and indent it took seconds at 10,000 scenarios.

Whatever the text, the document is well-formed: after the caller's cleaning, every character
XML 1.0 cannot hold (controls but tab, LF and CR; surrogates; U+FFFE and U+FFFF) becomes U+FFFD.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from clawspec.text import valid_unicode

DECLARATION = "<?xml version='1.0' encoding='utf-8'?>\n"
_ATTRIBUTE_ESCAPES = (
    ("&", "&amp;"),  # first: the other replacements add ampersands
    ("<", "&lt;"),
    (">", "&gt;"),
    ('"', "&quot;"),
    ("\r", "&#13;"),  # line ends and tabs inside a value would be normalised by a parser
    ("\n", "&#10;"),
    ("\t", "&#09;"),
)
_TEXT_ESCAPES = _ATTRIBUTE_ESCAPES[:3]
_CACHED_UP_TO = 200  # characters: ids, names, paths and numbers repeat across a report
# Not an XML 1.0 `Char` (https://www.w3.org/TR/xml/#charsets).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
REPLACEMENT = "\ufffd"


def xml_chars(text: str) -> str:
    """`text` with each character XML 1.0 forbids replaced by U+FFFD (a surrogate pair is
    joined into its character first). Printable text has none: it is returned as it is."""
    if text.isprintable():
        return text
    return _NOT_XML.sub(REPLACEMENT, valid_unicode(text))


def _escape(text: str, escapes: tuple[tuple[str, str], ...]) -> str:
    for char, entity in escapes:
        if char in text:
            text = text.replace(char, entity)
    return text


class XmlText:
    """Renders elements as indented text; `clean` sees every attribute value and text before
    it is escaped (secrets are masked as the user wrote them, not as XML spells them), then
    `xml_chars` makes it text XML can hold."""

    def __init__(self, clean: Callable[[str], str]) -> None:
        self._clean = lambda text: xml_chars(clean(text))
        self._attributes: dict[str, str] = {}

    def _attribute(self, value: str) -> str:
        done = self._attributes.get(value)
        if done is None:
            done = _escape(self._clean(value), _ATTRIBUTE_ESCAPES)
            if len(value) <= _CACHED_UP_TO:
                self._attributes[value] = done
        return done

    def element(
        self,
        tag: str,
        attrs: dict[str, str],
        level: int,
        children: Sequence[str] = (),
        text: str | None = None,
    ) -> str:
        """One element at indentation `level`; `children` are elements rendered at level + 1
        (an element with children never has text of its own)."""
        attribute = self._attribute
        head = "<" + tag + "".join(f' {key}="{attribute(value)}"' for key, value in attrs.items())
        if children:
            inner = "\n" + "  " * (level + 1)
            return f"{head}>{inner}{inner.join(children)}\n{'  ' * level}</{tag}>"
        text = self._clean(text) if text else ""
        return f"{head}>{_escape(text, _TEXT_ESCAPES)}</{tag}>" if text else head + " />"

    @staticmethod
    def document(root: str) -> bytes:
        """The declaration and the root element as UTF-8 (every text went through `xml_chars`:
        no surrogate is left for the encoder to refuse)."""
        return (DECLARATION + root + "\n").encode("utf-8", "replace")
