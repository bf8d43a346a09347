"""``compbench.replay`` — The replay: a recorded transcript, a strategy, a simulated model.

``session`` is what a strategy sees and the actions it answers with, ``viewstate`` how an action changes
the view, ``loop`` the steps, ``events`` what it records, ``context`` the caches the replays of one
transcript share, ``runs`` every transcript × configuration into table rows, ``executors`` where they run.
"""
