"""A transport failure (refused, reset, cut short, timed out) in a few words, not urllib3's
nested wrapper text: what the hooks client and the chat client both say about a failed call."""

from __future__ import annotations

import re

# The operating system's words in urllib3's text: "... [Errno 111] Connection refused'))".
_ERRNO = re.compile(r"\[Errno -?\d+\] ([^'\"()\]\[]+)")
# urllib3's words for a body shorter than its Content-Length.
_INCOMPLETE = re.compile(r"IncompleteRead\((\d+) bytes read, (\d+) more expected\)")
_MARKERS = (
    "Connection refused",
    "timed out",
    "Name or service not known",
    "Connection reset",
    "RemoteDisconnected",
    "IncompleteRead",
)


def transport_reason(exc: Exception) -> str:
    """The cause of `exc` in a few words, else its whole text (not cut: a caller that masks a
    secret in it cuts after masking, so that no part of the secret is left)."""
    text = str(exc)
    short = _INCOMPLETE.search(text)
    if short:
        return f"{short.group(1)} bytes came, {short.group(2)} more were announced"
    errno = _ERRNO.search(text)
    if errno:
        return errno.group(1).strip().lower()
    for marker in _MARKERS:
        if marker in text:
            return marker.lower()
    return text


def closed_before_answer(exc: Exception) -> bool:
    """True when a request failed because the server closed or reset the connection before
    any of its answer came (not a refused connection, not a timeout, not a cut answer).

    It is what a keep-alive connection gives that the server closed for idleness just as the
    request went out on it (Node's HTTP server, OpenClaw's, closes them after 5 s idle; so do
    proxies): the request never reached a handler, and may be sent once more."""
    text = str(exc)
    return "Connection aborted" in text and any(
        cause in text for cause in ("RemoteDisconnected", "ConnectionResetError", "BrokenPipe")
    )


# A keep-alive connection the server closed for idleness fails at once, before any handler read
# the request. One closed later (a proxy dropping a run in progress) may have started the
# agent's run: sent again, the agent would run twice, with its side effects.
STALE_CLOSE_S = 0.5


def safe_to_resend(exc: Exception, waited_s: float) -> bool:
    """True when the request that failed with `exc` after `waited_s` seconds never reached a
    handler (`closed_before_answer`, at once), so sending it once more cannot repeat a run."""
    return waited_s <= STALE_CLOSE_S and closed_before_answer(exc)
