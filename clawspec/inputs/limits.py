"""How large and how deep a contract may be: hostile contracts get an error, not a hang.

Contracts come from anyone who can open a pull request, so loading one must stay cheap whatever
it holds. Three ceilings, each a contract error (exit 2) at `file:line:column`:

- the file's size (`limits.contract_max_bytes`, 1 MiB): only that much is ever read;
- nesting (`MAX_DEPTH`, 100 levels; a contract needs about 8): deeper data is refused while it
  is composed, before any recursive code sees it;
- YAML aliases: `*name` repeats the value anchored as `&name`, so a kilobyte of nested aliases
  can stand for billions of values (the "billion laughs"). Before any value is built, the
  document's node graph is walked once (each node once, however often it is referred to) to
  count the values aliases would repeat; past `limits.yaml_alias_nodes` (100,000) in all, or
  for an alias inside the collection it refers to, the contract is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from clawspec.config.settings import Settings

MAX_DEPTH = 100  # levels of nesting below the document's top level
DEFAULT_MAX_BYTES = 1024 * 1024
DEFAULT_ALIAS_NODES = 100_000


@dataclass(frozen=True)
class ContractLimits:
    """The ceilings contract loading applies (from `Settings.limits`)."""

    max_bytes: int = DEFAULT_MAX_BYTES
    alias_nodes: int = DEFAULT_ALIAS_NODES

    @classmethod
    def from_settings(cls, settings: Settings) -> ContractLimits:
        return cls(settings.limits.contract_max_bytes, settings.limits.yaml_alias_nodes)


DEFAULT_LIMITS = ContractLimits()


def too_deep() -> str:
    return f"nesting deeper than {MAX_DEPTH} levels (the limit for contracts)"


def too_many_aliased(budget: int, setting: bool = True) -> str:
    """Over the alias budget; `setting`: the budget is `limits.yaml_alias_nodes` (contracts)."""
    text = f"aliases (*name) repeat more than {budget:,} values in all"
    return text + " (limit: limits.yaml_alias_nodes)" if setting else text


RECURSIVE_ALIAS = "an alias (*name) inside the collection it refers to (recursive data)"


def too_large(size: int, limit: int) -> str:
    return (
        f"contract file is {size:,} bytes, over the limit of {limit:,} bytes "
        "(limits.contract_max_bytes)"
    )
