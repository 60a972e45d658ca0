"""Renderers: turn engine results into JSON, tables, markdown and HTML. They never compute."""
