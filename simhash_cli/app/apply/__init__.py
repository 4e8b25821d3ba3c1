"""``simhash apply``, acting on clusters: its request (:mod:`.request`) and run (:mod:`.run`);
the plan of what to keep and remove (:mod:`.plans`, written by ``dedupe --plan``, read back as
hostile input by :mod:`.loading`), its steps taken with every check again (:mod:`.apply`, with a
journal), or written as a shell script for review (:mod:`.script`)."""
