"""The PDF: the report model painted with Qt (QPdfWriter), vector text and charts.

The only part of app.report that imports Qt. `writer` writes the file; `layout` turns a
`Report` into pages of paint operations, built from `text` (fonts, sizes, wrapping),
`tables`, `composer` (the page cursor) and `flows` (one per kind of block); `charts`
paints bar, line and histogram charts with QPainter.
"""
