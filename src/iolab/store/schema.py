"""The database's schema: numbered migrations, applied in order; user_version counts them."""

from __future__ import annotations

MIGRATIONS: tuple[str, ...] = (
    # 1: runs, set-ups, cases, per-direction metrics, samples
    """
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        plan_name TEXT NOT NULL,
        plan_source TEXT NOT NULL,
        plan_hash TEXT NOT NULL,
        plan_text TEXT NOT NULL,
        overrides TEXT NOT NULL DEFAULT '{}',
        iolab_version TEXT NOT NULL,
        environment TEXT NOT NULL,
        started_at REAL NOT NULL,
        ended_at REAL,
        status TEXT NOT NULL DEFAULT 'running',
        case_count INTEGER NOT NULL,
        baseline TEXT,
        metric TEXT NOT NULL DEFAULT 'auto'
    );
    CREATE TABLE setups (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id),
        name TEXT NOT NULL,
        position INTEGER NOT NULL,
        definition TEXT NOT NULL,
        environment TEXT NOT NULL DEFAULT '{}',
        UNIQUE (run_id, name)
    );
    CREATE TABLE cases (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id),
        case_key TEXT NOT NULL,
        setup TEXT NOT NULL,
        workload TEXT NOT NULL,
        workload_position INTEGER NOT NULL,
        repetition INTEGER NOT NULL,
        options TEXT NOT NULL,
        status TEXT NOT NULL,
        error TEXT,
        started_at REAL NOT NULL,
        ended_at REAL NOT NULL,
        usr_cpu REAL,
        sys_cpu REAL,
        job_runtime_ms INTEGER,
        job_file TEXT NOT NULL,
        raw_json TEXT,
        warnings TEXT NOT NULL DEFAULT '[]',
        UNIQUE (run_id, case_key)
    );
    CREATE TABLE metrics (
        case_id INTEGER NOT NULL REFERENCES cases(id),
        direction TEXT NOT NULL,
        iops REAL NOT NULL,
        bw_bytes REAL NOT NULL,
        io_bytes INTEGER NOT NULL,
        runtime_ms INTEGER NOT NULL,
        lat_mean_ns REAL,
        lat_max_ns REAL,
        percentiles_ns TEXT NOT NULL DEFAULT '{}',
        PRIMARY KEY (case_id, direction)
    );
    CREATE TABLE samples (
        case_id INTEGER NOT NULL REFERENCES cases(id),
        metric TEXT NOT NULL,
        direction TEXT NOT NULL,
        time_ms INTEGER NOT NULL,
        value REAL NOT NULL
    );
    CREATE INDEX samples_case ON samples(case_id);
    """,
    # 2: which process runs a run (to recognise one that died) and what it leaves behind;
    # a run's origin (a plan, or imported files); metrics and samples per phase, round, host
    """
    ALTER TABLE runs ADD COLUMN owner TEXT NOT NULL DEFAULT '{}';
    ALTER TABLE runs ADD COLUMN origin TEXT NOT NULL DEFAULT '{"kind": "plan"}';
    ALTER TABLE cases ADD COLUMN target_state TEXT NOT NULL DEFAULT '';
    CREATE TABLE leftovers (
        run_id INTEGER NOT NULL REFERENCES runs(id),
        kind TEXT NOT NULL,
        path TEXT NOT NULL,
        UNIQUE (run_id, kind, path)
    );
    CREATE TABLE metrics2 (
        case_id INTEGER NOT NULL REFERENCES cases(id),
        phase TEXT NOT NULL DEFAULT 'measure',
        round INTEGER NOT NULL DEFAULT 0,
        host TEXT NOT NULL DEFAULT '',
        direction TEXT NOT NULL,
        iops REAL NOT NULL,
        bw_bytes REAL NOT NULL,
        io_bytes INTEGER NOT NULL,
        runtime_ms INTEGER NOT NULL,
        lat_mean_ns REAL,
        lat_max_ns REAL,
        percentiles_ns TEXT NOT NULL DEFAULT '{}',
        PRIMARY KEY (case_id, phase, round, host, direction)
    );
    INSERT INTO metrics2 (case_id, direction, iops, bw_bytes, io_bytes, runtime_ms,
        lat_mean_ns, lat_max_ns, percentiles_ns)
        SELECT case_id, direction, iops, bw_bytes, io_bytes, runtime_ms, lat_mean_ns,
        lat_max_ns, percentiles_ns FROM metrics;
    DROP TABLE metrics;
    ALTER TABLE metrics2 RENAME TO metrics;
    ALTER TABLE samples ADD COLUMN phase TEXT NOT NULL DEFAULT 'measure';
    ALTER TABLE samples ADD COLUMN round INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE samples ADD COLUMN host TEXT NOT NULL DEFAULT '';
    """,
    # 3: a local case's telemetry, per second: the allowed CPUs ("cpu") and each device of
    # the set-up (by kernel name); which CPUs and devices were watched, and the ramp skipped
    """
    CREATE TABLE telemetry (
        case_id INTEGER NOT NULL REFERENCES cases(id),
        time_ms INTEGER NOT NULL,
        source TEXT NOT NULL,
        metric TEXT NOT NULL,
        value REAL NOT NULL
    );
    CREATE INDEX telemetry_case ON telemetry(case_id);
    ALTER TABLE cases ADD COLUMN watched TEXT;
    """,
    # 4: figures published relative to a baseline's (study E's Write Back as a percentage of
    # Write Through): a run's ratios, never IOPS or bytes/s (store.ratio_rows)
    """
    CREATE TABLE ratios (
        run_id INTEGER NOT NULL REFERENCES runs(id),
        setup TEXT NOT NULL,
        baseline TEXT NOT NULL,
        workload TEXT NOT NULL,
        position INTEGER NOT NULL,
        direction TEXT NOT NULL,
        metric TEXT NOT NULL,
        value REAL NOT NULL,
        options TEXT NOT NULL DEFAULT '{}',
        PRIMARY KEY (run_id, setup, workload, direction, metric)
    );
    """,
    # 5: what is derived from the runs and kept (a long history's series: store.derived),
    # valid while `revision` is what it was derived at: every change to a run, a set-up, a
    # case or a metric counts one more; a run's cases counted by status from an index
    """
    CREATE TABLE revision (n INTEGER NOT NULL);
    INSERT INTO revision VALUES (0);
    CREATE TABLE derived (
        key TEXT PRIMARY KEY,
        revision INTEGER NOT NULL,
        method TEXT NOT NULL,
        value BLOB NOT NULL
    );
    CREATE INDEX cases_status ON cases(run_id, status);
    CREATE TRIGGER runs_insert AFTER INSERT ON runs
        BEGIN UPDATE revision SET n = n + 1; END;
    CREATE TRIGGER runs_update AFTER UPDATE ON runs
        BEGIN UPDATE revision SET n = n + 1; END;
    CREATE TRIGGER runs_delete AFTER DELETE ON runs
        BEGIN UPDATE revision SET n = n + 1; END;
    CREATE TRIGGER setups_insert AFTER INSERT ON setups
        BEGIN UPDATE revision SET n = n + 1; END;
    CREATE TRIGGER setups_update AFTER UPDATE ON setups
        BEGIN UPDATE revision SET n = n + 1; END;
    CREATE TRIGGER setups_delete AFTER DELETE ON setups
        BEGIN UPDATE revision SET n = n + 1; END;
    CREATE TRIGGER cases_insert AFTER INSERT ON cases
        BEGIN UPDATE revision SET n = n + 1; END;
    CREATE TRIGGER cases_update AFTER UPDATE ON cases
        BEGIN UPDATE revision SET n = n + 1; END;
    CREATE TRIGGER cases_delete AFTER DELETE ON cases
        BEGIN UPDATE revision SET n = n + 1; END;
    CREATE TRIGGER metrics_insert AFTER INSERT ON metrics
        BEGIN UPDATE revision SET n = n + 1; END;
    CREATE TRIGGER metrics_update AFTER UPDATE ON metrics
        BEGIN UPDATE revision SET n = n + 1; END;
    CREATE TRIGGER metrics_delete AFTER DELETE ON metrics
        BEGIN UPDATE revision SET n = n + 1; END;
    """,
    # 6: nothing derived is kept any more (the database holds results, not iolab's
    # conclusions: a kept history went stale with iolab's code and could be forged by whoever
    # hands the file over); `iolab history` reads the runs each time (docs/history.md)
    """
    DROP TRIGGER runs_insert;
    DROP TRIGGER runs_update;
    DROP TRIGGER runs_delete;
    DROP TRIGGER setups_insert;
    DROP TRIGGER setups_update;
    DROP TRIGGER setups_delete;
    DROP TRIGGER cases_insert;
    DROP TRIGGER cases_update;
    DROP TRIGGER cases_delete;
    DROP TRIGGER metrics_insert;
    DROP TRIGGER metrics_update;
    DROP TRIGGER metrics_delete;
    DROP TABLE derived;
    DROP TABLE revision;
    """,
    # 7: a history's read of the cases (store.figures) from an index alone, in its order: an
    # index, not a conclusion (SQLite keeps it with the rows it copies), so that a long
    # history never walks past each case's stored fio output (raw_json) to its warnings,
    # and sorts nothing
    """
    CREATE INDEX cases_history
        ON cases(run_id, workload_position, id, setup, workload, status, options, warnings);
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)
# iolab's mark on every database it creates (PRAGMA application_id): "iolb" in ASCII.
APPLICATION_ID = 0x696F6C62
# Schemas of databases made before the mark: known by their tables and user_version alone.
UNMARKED_VERSIONS = (1, 2)
# What reports show of a case: its measured phase, first round, on this host or aggregated.
MEASURED = "{t}.phase = 'measure' AND {t}.round = 0"  # the whole job, every host
MAIN_WINDOW = MEASURED + " AND {t}.host = ''"
