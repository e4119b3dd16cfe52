"""Play in the browser: the table seen from the person's seat (``table``), its FastAPI server
(``server``) and the pages (``static/``)."""
