# Wrong design: yield first, then tell the listeners. A consumer that closes the run never asks
# for the line after the yield, so the event it was just handed is never saved.
def _run(self, text):
    run = run_agent(self._model, self._system, self._messages, self._tools, text,
                    max_turns=self._max_turns,
                    get_steering=lambda: self._drain(self._steering),
                    get_follow_ups=lambda: self._drain(self._follow_ups))
    try:
        for event in run:
            yield event
            self._notify(event)
    finally:
        run.close()
        self._running = False


Harness._run = _run
