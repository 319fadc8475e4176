"""What the command line offers and shows before any work: the choices of its options, their
defaults and limits. Written once here, below every room, so that the modules that use them
and the cli (which builds every command at start-up) import them without importing each
other: `iolab --help` loads no report, plan loader or use case."""

DEFAULT_DB = "iolab.db"
MAX_CASES = 100_000  # a plan beyond this is refused unless --max-cases raises the limit
DOCUMENT_FORMATS = ("table", "markdown", "csv", "html", "json")
EXPORT_FORMATS = ("json", "csv", "parquet", "fio-plot")
CHART_KINDS = ("bars", "scaling", "heatmap", "timeseries", "latency", "ratio")
Y_METRICS = ("auto", "iops", "bw", "lat", "p50", "p90", "p99", "p99.9", "p99.99")
HISTORY_LEAST = 4  # earlier runs the noise needs before a run is judged against it
HISTORY_MOST_WINDOW = 1000  # the most earlier runs a run is judged against
