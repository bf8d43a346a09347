"""``compbench.replay`` — The replay: a recorded transcript, a strategy, a simulated model.

The vocabulary (the view, the actions, the events, the caches the replays of a transcript share) is
:mod:`compbench.sdk`. Here: ``viewstate`` how an action changes the view, ``trajectories`` a transcript's
replays (under one strategy, or a run's configurations together), ``branch`` a trajectory that several
configurations follow until their answers differ (the loop of steps), ``members`` who is asked what and when
(wakes). Running a whole benchmark on top of it is :mod:`compbench.run`.
"""
