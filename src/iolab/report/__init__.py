"""Reports: a table and chart model built from the store, and one module per output format.

data (store -> Dataset) -> document (tables, charts, notes) -> terminal, markdown, csv, html;
charts drawn by plotly_render (HTML) and mpl_render (PNG/SVG) from one chart model (charts).
"""
