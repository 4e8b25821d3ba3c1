"""``simhash dedupe``: its request and every rule between its options (:mod:`.request`), what it
writes besides its pairs (:mod:`.outputs`), its run and what follows it (:mod:`.run`: the
search, then the plan, the report page and the dataset), the records written by their fate
(:mod:`.datasets`), the report's data (:mod:`.report`), ``--against REF`` (:mod:`.against`),
``--index DB`` (:mod:`.through_index`) and records read again in pieces with ``--memory
fingerprints`` (:mod:`.rereading`). The keep rule, the plan document and exact verification
from fingerprints are shared with other slices, below them (:mod:`simhash_cli.app.keep`,
:mod:`simhash_cli.app.plans`, :mod:`simhash_cli.app.from_fingerprints`)."""
