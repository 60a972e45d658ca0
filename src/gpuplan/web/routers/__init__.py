"""The web app's routers, one per area: `meta` (the page, health, catalog), `engines` (compare, plan,
simulate, audit, export, commit), `quotes` (the quote database), `reports` (HTML), `editor` (form fields).
Each route reads its request, calls the api (in the thread pool or a worker process) and answers."""
