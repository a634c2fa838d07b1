"""A fetched page -> a dated, clean ``Document``.

- ``extract``: main text, title and dated evidence from HTML (trafilatura, htmldate);
- ``pdftext``: the same from a PDF (pypdf, ``--keep-pdf``);
- ``dates``: date strings to days (offsets, day/month order);
- ``sources``: where a page states dates (meta tags, JSON-LD, bylines, URLs);
- ``pagedates``: a page's date evidence in its own zone and order;
- ``datepolicy``: the choice among disagreeing sources, the last stated modification, guesses;
- ``webarchive``: Wayback copies unwrapped to the page they archive.
"""
