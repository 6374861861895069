# Wrong design: the running flag is reset when the run is exhausted or closed, but not when an
# error ends it. After a listener raises, the harness refuses every prompt.
def _run(self, text):
    run = run_agent(self._model, self._system, self._messages, self._tools, text,
                    max_turns=self._max_turns,
                    get_steering=lambda: self._drain(self._steering),
                    get_follow_ups=lambda: self._drain(self._follow_ups))
    try:
        for event in run:
            self._notify(event)
            yield event
    except GeneratorExit:
        run.close()
        self._running = False
        raise
    run.close()
    self._running = False


Harness._run = _run
