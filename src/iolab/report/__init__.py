"""Reports: what the store holds, as one document of tables, charts and notes, in any format.

At the top, the model and the data: data (store -> Dataset, typed, read once), summary (one
ranking of the workloads), cells (the table model), charts (the chart model), document (a
report assembled from the views) and advice (`iolab advise`). Then, one way down:
views/ (what each section shows), render/ (the chart model drawn by plotly for HTML and by
matplotlib for PNG/SVG), formats/ (one module per format: terminal, markdown, csv, html,
json; chosen in formats.output) and text/ (the texts of `iolab env`, `controllers`,
`history`).
"""
