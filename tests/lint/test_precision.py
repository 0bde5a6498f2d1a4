"""`bin-undeclared` and `env-undeclared` on the shapes well-kept skills have: per-system
alternatives, placeholders and derived values, tools the skill installs. Each false positive is
silenced and the true positive beside it still reported; then silencing one rule for one file."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawspec.cli import main
from clawspec.lint.engine import lint_files

FRONT = """---
name: host-check
description: Check the host.
{meta}---
# Host check

"""


def _lint(tmp_path: Path, body: str, meta: str = "", rule: str = "bin-undeclared") -> list[str]:
    folder = tmp_path / "host-check"
    folder.mkdir(exist_ok=True)
    path = folder / "SKILL.md"
    path.write_text(FRONT.format(meta=meta) + body, encoding="utf-8")
    findings = lint_files([path]).findings
    return [f"{f.line}:{f.column} {f.message}" for f in findings if f.rule == rule]


# --- per-system alternatives -------------------------------------------------------------

OS_LABELS = """macOS:

```bash
lsof -nP -iTCP -sTCP:LISTEN
pfctl -s info
```

Linux:

```bash
ss -ltnup || ss -ltnp
ufw status || nft list ruleset
```

```bash
rsync -a backup/ /mnt/backup
```
"""


def test_commands_under_os_labels_are_not_requirements(tmp_path: Path) -> None:
    assert _lint(tmp_path, OS_LABELS) == [
        "22:1 'rsync' is run but not declared in metadata.openclaw.requires.bins"
    ]


def test_os_headings_comments_and_uname_conditionals(tmp_path: Path) -> None:
    body = """## On macOS

```bash
tmutil status
```

### Encryption

```bash
fdesetup status
```

## Linux

```sh
lsblk -f
```

## Everywhere

```bash
# macOS
sw_vers
# Linux
systemctl status sshd
if [ "$(uname)" = Darwin ]; then
  softwareupdate --schedule
else
  apt-get -s upgrade
fi
[[ "$OSTYPE" == darwin* ]] && launchctl list
# Any system
restic snapshots
```
"""
    assert _lint(tmp_path, body) == [
        "39:1 'restic' is run but not declared in metadata.openclaw.requires.bins"
    ]


def test_a_skill_for_one_system_requires_that_systems_commands(tmp_path: Path) -> None:
    meta = 'metadata: {"openclaw": {"os": ["darwin"]}}\n'
    found = _lint(tmp_path, OS_LABELS, meta)
    assert found[:2] == [
        "11:1 'lsof' is run but not declared in metadata.openclaw.requires.bins",
        "12:1 'pfctl' is run but not declared in metadata.openclaw.requires.bins",
    ]
    assert not any("'ss'" in f for f in found)  # the Linux block stays per-system


def test_fallback_chain_is_one_any_bins_requirement(tmp_path: Path) -> None:
    body = (
        "```bash\nufw status || firewall-cmd --state || nft list ruleset\ngit status || true\n```\n"
    )
    assert _lint(tmp_path, body) == [
        "8:1 'firewall-cmd' or 'nft' or 'ufw' (alternatives) are run but none is declared: "
        "list them in metadata.openclaw.requires.anyBins",
        "9:1 'git' is run but not declared in metadata.openclaw.requires.bins",
    ]
    meta = 'metadata: {"openclaw": {"requires": {"anyBins": ["ufw", "nft"], "bins": ["git"]}}}\n'
    assert _lint(tmp_path, body, meta) == []


def test_prose_or_and_command_v_make_alternatives(tmp_path: Path) -> None:
    body = """List listeners with `ss` on Linux or `lsof` on macOS.

```bash
ss -ltn
lsof -iTCP
```

```bash
if command -v podman >/dev/null; then podman ps; else docker ps; fi
```
"""
    assert _lint(tmp_path, body) == [
        "10:1 'lsof' or 'ss' (alternatives) are run but none is declared: list them in "
        "metadata.openclaw.requires.anyBins",
        "15:55 'docker' is run but not declared in metadata.openclaw.requires.bins",
    ]
    meta = 'metadata: {"openclaw": {"requires": {"anyBins": ["ss", "lsof"]}}}\n'
    assert _lint(tmp_path, body, meta) == [
        "16:55 'docker' is run but not declared in metadata.openclaw.requires.bins"
    ]


def test_a_block_conditional_on_its_tool(tmp_path: Path) -> None:
    body = """When Tailscale is involved, inspect live state:

```bash
tailscale status --json
```

Then check the route:

```bash
mtr -r example.com
```
"""
    assert _lint(tmp_path, body) == [
        "16:1 'mtr' is run but not declared in metadata.openclaw.requires.bins"
    ]


# --- installed tools -------------------------------------------------------------------------


def test_installers_and_what_they_install_are_not_requirements(tmp_path: Path) -> None:
    body = """If the CLI is not installed, install it:

```bash
npm i -g clawhub
clawhub uninstall @owner/my-skill
pip install --user black
black --check .
brew install --cask ngrok/ngrok/ngrok
ngrok http 80
```

Install `uv` first, or use `npx -y @scope/tsx@4 script.ts` (needs `npm --prefix /tmp/t i tsx`).

```bash
uv run tool.py
tsx script.ts
npm run build
```
"""
    assert _lint(tmp_path, body) == [
        "23:1 'npm' is run but not declared in metadata.openclaw.requires.bins"
    ]


def test_install_entries_in_the_metadata_provide_their_commands(tmp_path: Path) -> None:
    meta = (
        'metadata: {"openclaw": {"install": [{"id": "node", "kind": "node", "package": "ntn"},'
        ' {"id": "go", "kind": "go", "module": "github.com/acme/cli/cmd/acme@latest"}]}}\n'
    )
    body = "```bash\nntn login\nacme sync\nterraform plan\n```\n"
    assert _lint(tmp_path, body, meta) == [
        "11:1 'terraform' is run but not declared in metadata.openclaw.requires.bins"
    ]


# --- placeholders and derived values ---------------------------------------------------------


def test_derived_and_placeholder_names_are_not_environment_variables(tmp_path: Path) -> None:
    body = """Derived:

- `SOURCE_REPO`: the issue's repository.
- `PUSH_REPO` — the fork if set, else the source.

Replace `BASE_BRANCH` with the default branch. Pages: `ntn pages get <page-id>`.

```bash
gh issue list --repo "$SOURCE_REPO"
git push "https://github.com/$PUSH_REPO.git" "$BASE_BRANCH"
ntn api "v1/pages/$PAGE_ID"
SOCKET="${SOCKET_DIR:-/tmp}/op.sock"
test -n "${GH_HOST}" || echo default host
read -r TICKET_NO
echo "$TICKET_NO $SOCKET"
curl -H "Authorization: Bearer $LINEAR_API_KEY" https://api.linear.app
```

Set the environment variable `SENTRY_DSN` before running.
"""
    assert _lint(tmp_path, body, rule="env-undeclared") == [
        "22:32 'LINEAR_API_KEY' is read from the environment but not declared in "
        "metadata.openclaw.requires.env",
        "25:9 'SENTRY_DSN' is read from the environment but not declared in "
        "metadata.openclaw.requires.env",
    ]


def test_a_documented_variable_is_still_the_environments(tmp_path: Path) -> None:
    body = """## Environment

- `ACME_TOKEN`: your Acme token.
- `ACME_REGION`: where your account lives.

```bash
acme --region "$ACME_REGION" --token "$ACME_TOKEN" list
```

In code: `process.env.ACME_PAGE_ID` (a placeholder elsewhere: <acme-page-id>).
"""
    found = _lint(tmp_path, body, rule="env-undeclared")
    assert [f.split(" ")[1] for f in found] == ["'ACME_REGION'", "'ACME_TOKEN'", "'ACME_PAGE_ID'"]


# --- silencing one rule for one file -------------------------------------------------------


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("alpha", "beta"):
        folder = tmp_path / "skills" / name
        folder.mkdir(parents=True)
        text = FRONT.format(meta="").replace("host-check", name)
        (folder / "SKILL.md").write_text(text + "```bash\nrestic snapshots\n```\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_inline_comment_silences_one_rule_in_that_file(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    alpha = workspace / "skills" / "alpha" / "SKILL.md"
    alpha.write_text(
        alpha.read_text("utf-8") + "\n<!-- clawspec-lint: disable=bin-undeclared -->\n", "utf-8"
    )
    assert main(["lint", "--strict"]) == 1
    out = capsys.readouterr().out
    assert "skills/alpha" not in out
    assert "skills/beta/SKILL.md:8:1: warning [bin-undeclared] 'restic'" in out
    assert out.endswith("0 errors, 1 warning in 2 files\n")


def test_inline_comment_with_an_unknown_rule_is_reported(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    alpha = workspace / "skills" / "alpha" / "SKILL.md"
    alpha.write_text(
        alpha.read_text("utf-8") + "<!-- clawspec-lint: disable=bin-undeclard -->\n"
        "<!-- clawspec-lint: off -->\n",
        "utf-8",
    )
    main(["lint", "skills/alpha"])
    out = capsys.readouterr().out
    assert (
        "skills/alpha/SKILL.md:10:1: warning [directive-invalid] clawspec-lint: disable names "
        "unknown rule 'bin-undeclard' (it silences nothing)"
    ) in out
    assert (
        "skills/alpha/SKILL.md:11:1: warning [directive-invalid] cannot read 'off': write "
        "<!-- clawspec-lint: disable=RULE[,RULE] -->"
    ) in out
    assert "[bin-undeclared] 'restic'" in out


def test_config_ignore_silences_one_rule_for_matching_files(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "clawspec.yaml").write_text(
        "lint:\n  ignore:\n    - {rule: bin-undeclared, path: skills/alpha/SKILL.md}\n"
        "    - {rule: name-folder-mismatch, path: 'skills/**'}\n",
        "utf-8",
    )
    (workspace / "skills" / "sub").mkdir()
    assert main(["lint", "skills"]) == 0
    out = capsys.readouterr().out
    assert "skills/alpha" not in out
    assert "skills/beta/SKILL.md:8:1: warning [bin-undeclared]" in out
    # from a sub-folder the globs still resolve against the folder of clawspec.yaml
    capsys.readouterr()
    main(["lint", str(workspace / "skills"), "--config", str(workspace / "clawspec.yaml")])
    assert "skills/alpha" not in capsys.readouterr().out


def test_config_ignore_with_an_unknown_rule_is_a_config_error(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "clawspec.yaml").write_text(
        "lint:\n  ignore:\n    - {rule: bins, path: skills/alpha/SKILL.md}\n", "utf-8"
    )
    assert main(["lint"]) == 2
    assert "clawspec.yaml:3:8: lint.ignore.0.rule: unknown rule 'bins' (known: bin-undeclared" in (
        capsys.readouterr().err
    )
