"""Stage 3, sketches -> candidate pairs, and how the search is chosen: ``blocking`` (exact
equality of fingerprint blocks, the pigeonhole scheme), ``tables`` (Manku's permuted tables,
every pair within k bits), ``candidates`` (each scheme's candidates), ``allpairs`` (every pair
at a cosine, exactly); ``scheme`` (what a scheme is), ``pricing`` (what each costs and finds),
``pilot`` and ``pilot_pieces`` (the corpus's own pairs, found exactly), ``planner`` (the scheme
a run takes), ``background``, ``recall``, ``calibrate``."""
