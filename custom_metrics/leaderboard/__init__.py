"""The leaderboard: results files of any harness version (``common.results``), one table
per paper built from the papers' specs (``registry``, ``tables``), rendered to markdown,
CSV, HTML and charts (``render``); ``build`` is the command."""
