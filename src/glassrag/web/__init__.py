"""The local web app (`glassrag serve`): ask a question and see its route, read the
analytics of saved runs, look at the documents and where each chunk was cut.

Server-rendered pages (Starlette, Jinja2, inline SVG, no JavaScript), each with a JSON
twin that holds exactly what the page draws. Needs the `web` extra.
"""
