"""The action plan: the document a dedupe writes (``--plan FILE``: which file of each cluster
is kept and what would happen to the others, each file's state and digest) and
``simhash apply`` acts on. Both slices share it, so it lives below them: ``request`` (what a
dedupe is asked to write), ``document`` (clusters -> the plan), ``seal`` (this user's
signature over it). Not ``simhash plan``, which prices the search's schemes
(:mod:`simhash_cli.app.schemes`)."""
