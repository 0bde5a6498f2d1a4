"""One run's model traffic: the proxy, what each scenario recorded or replayed, the cassettes.

Record mode keeps each scenario's calls in memory and writes its folder when the run ends (a
sub-agent may still call the model after the hook request returned); replay mode loads a
scenario's folder when the scenario starts and answers from it, never from the network.
"""

from __future__ import annotations

import contextlib
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from clawspec.secrets import register
from clawspec.traffic.attribution import Attributor, Registration
from clawspec.traffic.cassette import (
    Cassette,
    CassetteFile,
    RecordedRequest,
    RecordedResponse,
    load_dir,
    write_dir,
)
from clawspec.traffic.diff import Candidate, closest, explain
from clawspec.traffic.folders import is_attempt_folder
from clawspec.traffic.normalize import Normalizer
from clawspec.traffic.proxy import ModelProxy, Unmatched
from clawspec.traffic.routing import Routes

# Request headers that carry a provider credential: their values are redacted from cassettes.
CREDENTIAL_HEADERS = ("authorization", "x-api-key", "api-key", "x-goog-api-key")


Library = list[tuple[CassetteFile, str, Candidate]]  # a scenario's cassettes, keys, bodies


@dataclass
class ScenarioTraffic:
    """What one invocation of a scenario did with the model (filled while it runs).

    A scenario run several times (`repeat`) has one per attempt: each attempt replays the whole
    recording, and record mode keeps the first attempt's calls as the scenario's recording.
    """

    scenario: str
    folder: Path
    serial: int = 0  # order of the invocation in the run
    # The OpenClaw release of the gateway it runs on, when known: stored with its recording,
    # compared with the recording's on a replay miss.
    openclaw_version: str | None = None
    calls: int = 0
    used: list[int] = field(default_factory=list)  # replay: cassette indexes that answered
    unmatched: list[list[str]] = field(default_factory=list)  # replay: one diff per miss
    recorded: list[Cassette] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # unreadable cassette files
    # Set at the first miss, whichever of the scenario's runs made the call (a sub-agent's
    # too): the scenario is an error naming it whatever happens next, so it stops waiting.
    stop: threading.Event = field(default_factory=threading.Event)


class TrafficSession:
    """Implements the proxy's `TrafficHandler` for one run."""

    def __init__(
        self,
        mode: str,
        normalizer: Normalizer,
        upstreams: dict[str, str] | None = None,
    ) -> None:
        if mode not in ("record", "replay"):
            raise ValueError(f"model traffic mode must be record or replay, not {mode!r}")
        self.mode = mode
        self.normalizer = normalizer
        self._upstreams = dict(upstreams or {})
        self._lock = threading.Lock()
        self._attributor = Attributor()
        self._invocations: dict[int, ScenarioTraffic] = {}  # by registration serial
        # By cassette folder: a scenario's variants share its id, each has a folder of its own.
        self._libraries: dict[Path, tuple[Library, list[str]]] = {}
        self.seen = 0  # model calls that reached the proxy
        self.unattributed = 0
        self._proxy: ModelProxy | None = None
        self._models: dict[str, list[str]] = {}
        self.unrouted: list[str] = []  # providers of the gateway config the proxy cannot see
        self.unsaved: list[str] = []  # recordings that could not be written, and why

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self, port: int = 0) -> str:
        """Start the proxy; return its base URL."""
        self._proxy = ModelProxy(self, port).start()
        return self._proxy.base_url

    @property
    def base_url(self) -> str:
        if self._proxy is None:
            raise RuntimeError("model traffic proxy not started")
        return self._proxy.base_url

    def stop(self) -> list[Path]:
        """Stop the proxy; in record mode write every scenario's cassettes. Return them."""
        if self._proxy is not None:
            self._proxy.stop()
            self._proxy = None
        if self.mode != "record":
            return []
        # By folder: a scenario's variants share its id and each has a folder of its own.
        first: dict[Path, ScenarioTraffic] = {}
        for traffic in sorted(self._invocations.values(), key=lambda t: t.serial):
            kept = first.get(traffic.folder)
            if kept is None or (not kept.recorded and traffic.recorded):
                first[traffic.folder] = traffic
        written: list[Path] = []
        attempts: dict[Path, set[Path]] = {}  # a repeated scenario's folder -> its attempts
        for traffic in first.values():
            try:
                written += write_dir(traffic.folder, traffic.recorded)
            except OSError as exc:  # the runs are done and paid for: say so, keep the rest
                self.unsaved.append(f"{traffic.folder}: {exc.strerror or exc}")
                continue
            if is_attempt_folder(traffic.folder):
                attempts.setdefault(traffic.folder.parent, set()).add(traffic.folder)
        for owner, recorded in attempts.items():
            _drop_older_recordings(owner, recorded)
        return written

    def route(self, routes: Routes) -> None:
        """Take what bring-up routed: where each provider's calls go in record mode, its model
        ids (answered to `GET /models` in replay), its API key (redacted), and the providers
        whose calls bypass the proxy (a warning after the run)."""
        with self._lock:
            self._upstreams.update(routes.upstreams)
            self._models.update(routes.models)
            register(*routes.keys)  # masked in cassettes and every other output
            self.unrouted = sorted({*self.unrouted, *routes.unrouted})

    # -- scenarios ---------------------------------------------------------------------------
    @contextmanager
    def scenario(
        self,
        scenario_id: str,
        folder: Path,
        message: str,
        wait_s: float = 60.0,
        conversation: bool = False,
        openclaw_version: str | None = None,
        stop: threading.Event | None = None,
    ) -> Iterator[ScenarioTraffic]:
        """Attribute the model calls made while the block runs (and by its traces) to it;
        `openclaw_version`: the release of the gateway it runs on, None when not known; `stop`
        is set at its first replay miss."""
        registration = self._attributor.register(scenario_id, message, wait_s, conversation)
        traffic = ScenarioTraffic(
            scenario_id, folder, registration.serial, openclaw_version=openclaw_version
        )
        if stop is not None:
            traffic.stop = stop
        with self._lock:
            self._invocations[registration.serial] = traffic
        try:
            yield traffic
        finally:
            self._attributor.release(registration)

    # -- TrafficHandler ----------------------------------------------------------------------
    def upstream(self, provider: str) -> str | None:
        with self._lock:
            return self._upstreams.get(provider)

    def attribute(self, headers: dict[str, str], body: Any) -> Registration | None:
        found = [v for k, v in headers.items() if k.lower() in CREDENTIAL_HEADERS and v]
        registration = self._attributor.attribute(headers, body)
        with self._lock:
            self.seen += 1
            self.unattributed += registration is None
            for value in found:  # masked in cassettes and every other output
                register(value, value.split(" ", 1)[-1])  # and the key without "Bearer "
        return registration

    def recorded(
        self, registration: Registration | None, request: RecordedRequest, answer: RecordedResponse
    ) -> None:
        if registration is None:
            return
        with self._lock:
            traffic = self._invocations[registration.serial]
            traffic.calls += 1
            request = request.model_copy(update={"body": self.normalizer.substitute(request.body)})
            answer = RecordedResponse.model_validate(
                self.normalizer.substitute(answer.model_dump(mode="json"))
            )
            traffic.recorded.append(
                Cassette(
                    scenario=registration.scenario,
                    index=len(traffic.recorded) + 1,
                    recorded_at=datetime.now(UTC).isoformat(timespec="seconds"),
                    openclaw_version=traffic.openclaw_version,
                    request=request,
                    response=answer,
                )
            )

    def replay(
        self, registration: Registration | None, request: RecordedRequest
    ) -> RecordedResponse | Unmatched:
        if registration is None:
            return Unmatched(
                "clawspec replay: cannot tell which scenario this model request belongs to "
                "(no known trace and no running scenario's hook message in it)"
            )
        with self._lock:
            traffic = self._invocations[registration.serial]
            library = self._library(traffic)
            key = self.normalizer.key(request.endpoint, request.body)
            hits = [entry for entry in library if entry[1] == key]
            if hits:
                unused = [e for e in hits if e[0].cassette.index not in traffic.used]
                entry = (unused or hits)[0]
                traffic.calls += 1
                traffic.used.append(entry[0].cassette.index)
                response = entry[0].cassette.response.model_dump(mode="json")
                return RecordedResponse.model_validate(self.normalizer.restore(response))
            lines = self._explain(traffic, request, library)
            traffic.unmatched.append(lines)
            traffic.stop.set()
        return Unmatched("clawspec replay: no recorded model call matches: " + " | ".join(lines))

    def _library(self, traffic: ScenarioTraffic) -> Library:
        """The scenario's recording, loaded once per run (attempts share it)."""
        if traffic.folder not in self._libraries:
            loaded = load_dir(traffic.folder)
            library: Library = []
            for item in loaded.files:
                request = item.cassette.request
                body = self.normalizer.body(request.body)
                candidate = Candidate(item.path.name, request.endpoint, body)
                library.append(
                    (item, self.normalizer.key(request.endpoint, request.body), candidate)
                )
            problems = [f"{p.path.name}: {p.message}" for p in loaded.problems]
            self._libraries[traffic.folder] = (library, problems)
        library, traffic.problems = self._libraries[traffic.folder]
        return library

    def _explain(
        self,
        traffic: ScenarioTraffic,
        request: RecordedRequest,
        library: Library,
    ) -> list[str]:
        number = traffic.calls + len(traffic.unmatched) + 1
        if not library:
            return [
                f"model call {number}: nothing recorded for this scenario in {traffic.folder} "
                "(record it with --model-traffic record)"
            ]
        body = self.normalizer.body(request.body)
        best = closest(request.endpoint, body, [entry[2] for entry in library])
        assert best is not None
        recorded_on = next(e[0].cassette.openclaw_version for e in library if e[2] is best)
        return [
            f"model call {number} differs from the closest recording {best.name}"
            f"{_upgraded(recorded_on, traffic.openclaw_version)}:",
            *explain(request.endpoint, body, best),
        ]

    def models(self, provider: str) -> dict[str, Any]:
        """GET /models in replay: the provider's configured models, else those recorded so far."""
        with self._lock:
            names = self._models.get(provider) or sorted(
                {
                    str(entry[0].cassette.request.body.get("model"))
                    for library, _ in self._libraries.values()
                    for entry in library
                    if isinstance(entry[0].cassette.request.body, dict)
                    and entry[0].cassette.request.provider in (provider, "")
                }
            )
        return {
            "object": "list",
            "data": [{"id": n, "object": "model", "owned_by": "clawspec-replay"} for n in names],
        }


def _upgraded(recorded_on: str | None, replayed_on: str | None) -> str:
    """Both releases when the recording was made on another OpenClaw than the one replaying it:
    its prompts change between releases, so that is the likelier cause of a miss than an edit
    of yours. Nothing when either is unknown (an older cassette, a target gateway)."""
    if recorded_on is None or replayed_on is None or recorded_on == replayed_on:
        return ""
    return (
        f" (recorded on OpenClaw {recorded_on}, replayed on {replayed_on}: record again "
        "after an upgrade, --model-traffic record)"
    )


def _drop_older_recordings(owner: Path, recorded: set[Path]) -> None:
    """A scenario recorded again with repeats: its recording made without repeats, and those
    of attempts this recording did not make, are of an older run (a replay without repeats
    would read them as if current)."""
    for child in owner.iterdir():
        with contextlib.suppress(OSError):
            if child.is_file() and child.suffix == ".json":
                child.unlink()
            elif child.is_dir() and is_attempt_folder(child) and child not in recorded:
                shutil.rmtree(child)
