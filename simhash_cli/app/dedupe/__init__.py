"""``simhash dedupe``: its request and every rule between its options (:mod:`.request`), what it
writes besides its pairs (:mod:`.outputs`), its run and what follows it (:mod:`.run`: the
search, then the plan, the report page and the dataset), the keep rule (:mod:`.kept`), the
records written by their fate (:mod:`.datasets`), the report's data (:mod:`.report`),
``--against REF`` (:mod:`.against`) and exact verification from fingerprints, reading again
what needs vectors (:mod:`.rereading`)."""
