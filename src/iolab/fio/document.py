"""fio's JSON result, read once: the one typed document that what a run left behind
(`outcome`), the runner and the importer read a case's figures from."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from iolab.fio import parse
from iolab.model import JSON, CaseMetrics, Direction, JSONObject


@dataclass(frozen=True)
class FioDocument:
    """fio's job entries (one per job, per host in client/server mode, per process without
    group_reporting) and what the document says beside them (fio's version, its timestamp).
    Each figure is worked out once, when first asked for."""

    header: JSONObject
    jobs: tuple[JSONObject, ...]

    def __post_init__(self) -> None:
        if not self.jobs:
            raise parse.ParseError("fio's JSON result lists no jobs")

    @classmethod
    def read(cls, text: str) -> FioDocument:
        """fio's printed JSON (warning lines before it skipped); ParseError when there is none,
        or it is cut short or damaged, or it lists no jobs."""
        data = parse.load_json(text)
        jobs = data["jobs"]
        if not isinstance(jobs, list):  # load_json saw to it
            raise parse.ParseError("fio's JSON result has no 'jobs' list")
        entries = tuple(job for job in jobs if isinstance(job, dict))
        if len(entries) != len(jobs):
            raise parse.ParseError("fio's JSON result has a job entry that is not an object")
        return cls({key: value for key, value in data.items() if key != "jobs"}, entries)

    @cached_property
    def metrics(self) -> CaseMetrics:
        """The case's metrics, all job entries aggregated."""
        return parse.metrics(self._listing)

    @cached_property
    def by_host(self) -> dict[str, CaseMetrics]:
        """Each host's metrics (client/server mode); {} for one host's run."""
        return parse.by_host(self._listing)

    @cached_property
    def steady(self) -> parse.SteadyState | None:
        """fio's steady-state result, when the job asked for one."""
        return parse.steady_state(self._listing)

    @cached_property
    def histograms(self) -> dict[Direction, dict[int, int]]:
        """json+ completion-latency histograms per direction (bucket value in ns -> count)."""
        return parse.histogram_bins(self._listing)

    @property
    def error(self) -> int:
        """The first errno a job stopped with; 0 when none did."""
        return self.metrics.error

    @property
    def timestamp_ms(self) -> int | None:
        """When fio wrote its report (ms since the epoch), when it says."""
        stamp = self.header.get("timestamp_ms")
        return stamp if isinstance(stamp, int) else None

    @property
    def _listing(self) -> JSONObject:
        jobs: list[JSON] = [dict(job) for job in self.jobs]
        return {"jobs": jobs}
