"""The application: typed requests (one per command, each with the cross-option rules it
checks), the run functions that chain the stages for each command, and acting on clusters
(:mod:`.actions`). Never imports click or Rich: it talks to the face through one hooks object."""
