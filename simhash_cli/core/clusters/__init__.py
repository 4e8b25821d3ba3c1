"""Stage 5, verified pairs -> clusters: ``cluster`` (the connected components of the
near-duplicate graph), ``groups`` (clusters a person can act on, around the member kept),
``closure`` (the pairs inside found groups, checked)."""
