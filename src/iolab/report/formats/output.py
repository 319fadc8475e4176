"""Rendering a document in one format, and writing it with the files that go beside it."""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from iolab import outputs, saving
from iolab.choices import DOCUMENT_FORMATS
from iolab.errors import ReportError
from iolab.report.charts import Chart
from iolab.report.document import Document
from iolab.report.formats import csv as csv_format
from iolab.report.formats import html, json_format, markdown, terminal
from iolab.report.render import mpl_render
from iolab.report.render.mpl_render import ImageFormat
from iolab.units import human_bytes

PARALLEL_FROM, PARALLEL_WORKERS = 6, 4  # images drawn on several CPUs from 6 charts on


@dataclass(frozen=True)
class Rendered:
    """The main text, and files (path relative to the main file's folder -> bytes)."""

    text: str
    files: Mapping[str, bytes] = field(default_factory=dict)


def check_destination(
    output: str, export_dir: str | None, *, force: bool = False, images: bool = False
) -> None:
    """Where a report goes is checked before any work: regular files and folders only, never
    a symbolic link, and no file iolab did not write unless `force` (see iolab.outputs).
    `images`: a Markdown report's images folder (report_files/) beside it is checked too."""
    if output != "-":
        fix = "give a file name such as report.md"
        saving.check_file(output, force=force, what=f"-o {output}", fix=fix)
        if images:
            with outputs.Folder(outputs.split(output)[0], force=force) as folder:
                folder.check_folders([images_folder(output)])
    if export_dir is not None:
        saving.check_folder(export_dir, force=force, what=f"--export {export_dir}").close()


def images_folder(output: str) -> str:
    """Where a Markdown report's images go: report.md -> report_files/."""
    return f"{Path(output).stem}_files"


def render(document: Document, fmt: str, output: str = "-", image_format: str = "png") -> Rendered:
    if fmt == "table":
        return Rendered(terminal.render_document(document))
    if fmt == "csv":
        return Rendered(csv_format.render(document.main_table()))
    if fmt == "html":
        return Rendered(html.render_document(document))
    if fmt == "json":
        return Rendered(json_format.render_document(document))
    if fmt == "markdown":
        if output == "-":
            return Rendered(markdown.render_document(document))
        image: ImageFormat = "svg" if image_format == "svg" else "png"
        folder = images_folder(output)
        images = {c.name: f"{folder}/{c.name}.{image}" for c in document.charts()}
        drawn = draw([(c, image) for c in document.charts()])
        files = {images[c.name]: data for c, data in zip(document.charts(), drawn, strict=True)}
        return Rendered(markdown.render_document(document, images), files)
    raise ReportError(f"unknown format {fmt!r}; choose one of {', '.join(DOCUMENT_FORMATS)}")


def _draw(job: tuple[Chart, ImageFormat]) -> bytes:
    return mpl_render.render(*job)


def draw(jobs: Sequence[tuple[Chart, ImageFormat]]) -> list[bytes]:
    """Charts as images, in order; many of them on several CPUs (forked workers that share
    the matplotlib this process imported), since each takes about 0.2 s to draw."""
    workers = min(os.cpu_count() or 1, PARALLEL_WORKERS)
    if len(jobs) < PARALLEL_FROM or workers < 2 or "fork" not in mp.get_all_start_methods():
        return [_draw(job) for job in jobs]
    import matplotlib.figure  # noqa: F401  (imported once, before the fork)

    with ProcessPoolExecutor(workers, mp_context=mp.get_context("fork")) as pool:
        return list(pool.map(_draw, jobs, chunksize=max(1, len(jobs) // (workers * 2))))


def exported(document: Document) -> dict[str, bytes]:
    """Every chart as PNG and SVG, every table as CSV, the findings as findings.csv: file name
    -> bytes."""
    formats: tuple[ImageFormat, ...] = ("png", "svg")
    jobs = [(chart, fmt) for chart in document.charts() for fmt in formats]
    files = {f"{c.name}.{fmt}": data for (c, fmt), data in zip(jobs, draw(jobs), strict=True)}
    for table in document.tables():
        files[f"{table.name}.csv"] = csv_format.render(table).encode()
    if document.findings:
        files["findings.csv"] = csv_format.render_findings(document.findings).encode()
    return files


def emit(
    document: Document,
    fmt: str,
    output: str,
    image_format: str,
    export_dir: str | None,
    force: bool = False,
) -> tuple[str, list[str]]:
    """Render `document`, write it to `output` (with its images) unless that is "-", and
    export every chart and table into `export_dir` if given; every file is checked before
    any is written (iolab.outputs). Returns (what goes to stdout, lines saying what was
    written)."""
    rendered = render(document, fmt, output, image_format)
    said, batches = [], []
    if export_dir is not None:
        files = exported(document)
        batches.append(saving.WriteBatch(outputs.Target(export_dir, named=True), files, "report"))
        said.append(f"wrote {len(files)} files (charts: PNG and SVG; tables: CSV) in {export_dir}")
    if output != "-":
        folder, name = outputs.split(output)
        batches.append(
            saving.WriteBatch(folder, {name: rendered.text.encode(), **rendered.files}, "report")
        )
    saving.save(batches, force=force)
    if output == "-":
        return rendered.text, said
    size = human_bytes(len(rendered.text.encode()))
    extra = f" and {len(rendered.files)} images in {images_folder(output)}/"
    said.append(f"wrote {output} ({size}){extra if rendered.files else ''}")
    return "", said
