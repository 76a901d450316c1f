"""Plotly figure builders: pure functions from data to ``go.Figure``, testable without a browser."""
