"""A scenario in a hermetic run: attribute its model calls; a replay miss is an error."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from clawspec.errors import ConfigError
from clawspec.text import one_line
from clawspec.traffic.folders import is_attempt_folder

if TYPE_CHECKING:
    from clawspec.config.settings import Settings
    from clawspec.reports.model import ModelTrafficResult
    from clawspec.runner.scenario import RunEnv, ScenarioPlan
    from clawspec.traffic.session import ScenarioTraffic, TrafficSession

# How long a scenario waits to start while another with the same hook message has not yet made
# its first model call (attribution would be ambiguous; see traffic/attribution.py).
ATTRIBUTION_WAIT_S = 60.0


def scenario_folder(plan: ScenarioPlan, settings: Settings, workspace: Path) -> Path:
    """The scenario's cassette folder, named after its identity: `<cassette_dir>/<contract path
    relative to the workspace root, without .yaml>/<identity name>` (and `/<variant>` with a
    variant), so it is the same whatever folder ClawSpec runs from."""
    from clawspec.traffic.cassette import cassette_root, identity_dir

    return identity_dir(cassette_root(settings, workspace), plan.identity)


def replay_folder(plan: ScenarioPlan, settings: Settings, workspace: Path) -> Path:
    """Where a replay reads the scenario's recording: its folder, or where an earlier version
    recorded it when only that exists (see `legacy_folder`)."""
    folder = scenario_folder(plan, settings, workspace)
    if _holds_cassettes(folder):
        return folder
    legacy = legacy_folder(plan, settings, workspace)
    return legacy if legacy is not None and _holds_cassettes(legacy) else folder


def legacy_folder(plan: ScenarioPlan, settings: Settings, workspace: Path) -> Path | None:
    """The folder earlier versions recorded into, when it differs: they named a contract
    outside the workspace after its path as shown (relative to the current folder, or as
    given), where the identity has its absolute path. Inside the workspace both agree."""
    from clawspec.traffic.cassette import cassette_root, scenario_dir

    if plan.identity.example is not None or plan.identity.variant is not None:
        return None  # rows and variants are newer than that naming
    root = cassette_root(settings, workspace)
    old = scenario_dir(root, plan.contract.display, plan.scenario.name)
    return None if old == scenario_folder(plan, settings, workspace) else old


def require_variant_cassettes(
    plans: Sequence[ScenarioPlan], settings: Settings, workspace: Path
) -> None:
    """In replay mode, every selected variant must have been recorded: one without a single
    cassette for its scenarios is a usage error naming it (its runs could only fail)."""
    if settings.model_traffic != "replay":
        return
    recorded: dict[str, bool] = {}
    for plan in plans:
        if plan.variant is None:
            continue
        name = plan.variant.name
        if not recorded.get(name):
            recorded[name] = _holds_cassettes(replay_folder(plan, settings, workspace))
    missing = [name for name, found in recorded.items() if not found]
    if missing:
        from clawspec.traffic.cassette import cassette_root

        root = cassette_root(settings, workspace)
        raise ConfigError(
            f"model_traffic replay: variant '{missing[0]}' has no cassettes under {root} (each "
            f"scenario's folder has a sub-folder per variant); record them first: clawspec run "
            f"--model-traffic record --variant {missing[0]}"
            + (f" (also missing: {', '.join(missing[1:])})" if len(missing) > 1 else "")
        )


def attempt_folder(folder: Path, attempt: int, mode: str) -> Path:
    """A repeated scenario's attempt records into a sub-folder of its own (`attempt-<n>`, from
    1), so that K replays are K different runs; a replay reads it when it exists, else the
    scenario's one recording (made without repeats), which every attempt then replays."""
    own = folder / f"attempt-{attempt + 1}"
    if mode == "record" or _holds_cassettes(own):
        return own
    return folder


def _holds_cassettes(folder: Path) -> bool:
    """Recordings in the folder, or in its attempts' (`attempt-<n>/`: a repeated scenario's)."""
    if not folder.is_dir():
        return False
    return any(folder.glob("*.json")) or any(
        is_attempt_folder(inner) and any(inner.glob("*.json")) for inner in folder.iterdir()
    )


@contextmanager
def model_traffic(
    plan: ScenarioPlan, env: RunEnv, message: str, timeout_s: float, stop: threading.Event
) -> Iterator[ScenarioTraffic | None]:
    """While the block runs, the proxy attributes new model calls to this scenario: those
    whose request carries `message` (a hook's message; a conversation's first turn, which
    every later turn's request holds in its history). A replay miss in any of them (a
    sub-agent's too) sets `stop`, the scenario's: what it waits for ends at once."""
    if env.traffic is None:
        yield None
        return
    choose = replay_folder if env.traffic.mode == "replay" else scenario_folder
    folder = choose(plan, env.settings, env.workspace)
    if (plan.scenario.repeat or env.settings.repeat) > 1:
        folder = attempt_folder(folder, env.attempt, env.traffic.mode)
    wait_s = min(ATTRIBUTION_WAIT_S, timeout_s)
    conversation = plan.scenario.turns is not None
    with env.traffic.scenario(
        plan.id, folder, message, wait_s, conversation, env.openclaw_version, stop
    ) as traffic:
        yield traffic


def replay_missed(traffic: ScenarioTraffic | None) -> bool:
    """Whether replay could not answer one of the scenario's model calls so far."""
    return traffic is not None and bool(traffic.unmatched)


def traffic_problem(traffic: ScenarioTraffic | None) -> str:
    """The scenario's error message when replay could not answer one of its model calls."""
    if traffic is None or not traffic.unmatched:
        return ""
    if traffic.problems:
        # A cassette that does not read is the likelier cause than a changed prompt.
        broken = "; ".join(traffic.problems[:2])
        return one_line(
            f"model traffic replay: a cassette of this scenario cannot be read ({broken}): "
            "record the scenario again (--model-traffic record) or fix the file",
            500,
        )
    first = traffic.unmatched[0]
    changed = next((line for line in first[1:] if not line.startswith("  ")), "")
    # the first changed line itself, so the terminal and the annotations show what differs
    edit = next((line.strip() for line in first[1:] if line.startswith(("  +", "  -"))), "")
    more = f" (and {len(traffic.unmatched) - 1} more)" if len(traffic.unmatched) > 1 else ""
    # Only a difference has a diff worth pointing at (a scenario never recorded has none).
    where = "; the whole diff: model_traffic.diff in the JSON report" if changed or edit else ""
    said = " ".join(part for part in (first[0], changed, edit) if part)
    return one_line(f"model traffic replay: {said}{more}{where}", 500)


def traffic_result(traffic: ScenarioTraffic | None, env: RunEnv) -> ModelTrafficResult | None:
    if traffic is None or env.traffic is None:
        return None
    try:
        folder = traffic.folder.resolve().relative_to(env.workspace.resolve()).as_posix()
    except ValueError:
        folder = str(traffic.folder)
    from clawspec.reports.model import ModelTrafficResult

    diff = [line for lines in traffic.unmatched for line in lines][:200]
    return ModelTrafficResult(
        mode=env.traffic.mode,
        cassette=folder,
        calls=traffic.calls,
        used=sorted(set(traffic.used)),
        unmatched=len(traffic.unmatched),
        diff=diff,
        problems=list(traffic.problems),
    )


WORKSPACE_PLACEHOLDER = "<clawspec:workspace>"


@contextmanager
def traffic_for_run(
    settings: Settings, workspace: Path, say: Callable[[str], None]
) -> Iterator[TrafficSession | None]:
    """The run's model traffic session (None when `model_traffic` is off).

    Bring-up mode: the proxy takes a free port and the generated config points the providers
    at it. Target mode: it listens on `model_proxy_port`; your openclaw.json points there.
    """
    if settings.model_traffic == "off":
        yield None
        return
    from clawspec.traffic.normalize import Normalizer
    from clawspec.traffic.session import TrafficSession

    bring_up = settings.gateway.mode == "bring_up"
    if settings.model_traffic == "record" and not bring_up and not settings.model_upstreams:
        raise ConfigError(
            "model_traffic 'record' against your own gateway needs model_upstreams "
            "(provider id -> the provider's real base URL) to forward the calls to"
        )
    normalizer = Normalizer.build(
        settings.volatile_fields,
        settings.volatile_patterns,
        {str(workspace.resolve()): WORKSPACE_PLACEHOLDER},
    )
    if settings.model_traffic == "record":
        from clawspec.traffic.cassette import cassette_root

        _writable(cassette_root(settings, workspace))
    session = TrafficSession(settings.model_traffic, normalizer, settings.model_upstreams)
    port = 0 if bring_up else settings.model_proxy_port
    try:
        base_url = session.start(port)
    except OSError as exc:
        raise ConfigError(
            f"model_proxy_port: the model traffic proxy cannot listen on 127.0.0.1:{port}: "
            f"{exc.strerror or exc}"
        ) from None
    if not bring_up:
        say(
            f"model traffic proxy ({settings.model_traffic}) on {base_url}: your gateway's "
            f"providers need baseUrl {base_url}/<provider id>"
        )
    try:
        yield session
    finally:
        session.stop()


def _writable(root: Path) -> None:
    """Recording writes under `root` once the runs are done (and the model paid for): a
    folder it cannot write to is said before anything runs."""
    import tempfile

    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=root):
            pass
    except OSError as exc:
        raise ConfigError(
            f"cassette_dir: cannot write recordings to {root}: {exc.strerror or exc} "
            "(record into a writable folder: --cassette-dir DIR)"
        ) from None


def traffic_warnings(session: TrafficSession, invoked: bool) -> list[str]:
    """What a user should know after a hermetic run (e.g. the gateway bypassed the proxy)."""
    warnings = []
    if invoked and session.seen == 0:
        warnings.append(
            f"model_traffic is {session.mode} but no model call reached the proxy at "
            f"{session.base_url}: the gateway does not go through it (set each provider's "
            "baseUrl to <proxy>/<provider id>); "
            + (
                "these results came from the real model, not the cassettes"
                if session.mode == "replay"
                else "nothing was recorded"
            )
        )
    for folder in session.unsaved:
        warnings.append(f"model traffic recording not saved (the previous one is kept): {folder}")
    if session.unrouted:
        warnings.append(
            f"model_traffic is {session.mode} but provider(s) {', '.join(session.unrouted)} "
            "have no baseUrl in the OpenClaw config, so their calls bypass the proxy (give "
            "each its real baseUrl to record and replay it)"
        )
    if session.unattributed:
        warnings.append(
            f"{session.unattributed} model call(s) could not be attributed to a scenario "
            + ("and were refused" if session.mode == "replay" else "and were not recorded")
        )
    return warnings
