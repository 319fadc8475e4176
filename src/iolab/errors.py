"""Typed errors. Library code raises these; only the cli turns them into messages."""


class IolabError(Exception):
    """A problem the user can act on. str(error) is one line that says what to do."""


class PlanError(IolabError):
    """The plan file, a preset or an override is invalid."""


class TargetError(IolabError):
    """A target path or device cannot be used as asked."""


class FioError(IolabError):
    """fio is missing, too old, or failed in a way that stops the whole run."""


class StoreError(IolabError):
    """The results database cannot be opened, migrated or queried."""


class ReportError(IolabError):
    """A report cannot be built from what the store holds."""


class Interrupted(IolabError):
    """The user stopped the run (Ctrl-C); finished cases are kept."""

    def __init__(self, message: str, run_id: int) -> None:
        super().__init__(message)
        self.run_id = run_id
