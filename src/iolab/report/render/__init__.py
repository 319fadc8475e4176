"""Renderers: the chart model (report.charts) drawn by plotly (HTML) and matplotlib (PNG/SVG)."""
