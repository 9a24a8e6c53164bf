"""The citation viewer: the cited page drawn with the passage highlighted, a table with its cited rows, a kept text
with its passage marked. `links` signs what a citation points at; `passage` finds it in a page's text (pure);
`pages` draws PDF pages and measures characters (PDFium, blocking); `cache` keeps drawn pages on disk; `sheets` reads a
kept workbook's rows as the workbook formats them; `html` writes the one page a person sees (pure)."""
