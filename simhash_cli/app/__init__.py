"""The application: one slice per command, each its typed request (whose ``check()`` states
every rule between its options), its run and what follows the run: :mod:`.fingerprint`,
:mod:`.compare`, :mod:`.explain`, :mod:`.schemes` (plan, calibrate), :mod:`.dedupe`,
:mod:`.apply`, :mod:`.index`. Beside them, what the slices share: the typed settings
(:mod:`.settings`), documents read (:mod:`.loading`, :mod:`.batches`, :mod:`.records`), the
engine protocol (:mod:`.engine`) and the hooks (:mod:`.hooks`). Never imports click or Rich: it
talks to the face through one hooks object."""
