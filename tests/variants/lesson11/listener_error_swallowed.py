# Wrong design: a listener's error is caught and dropped. The run goes on, and a saver that
# cannot save is silent.
def _notify(self, event):
    for listener in list(self._listeners):
        try:
            listener(event)
        except Exception:
            pass


Harness._notify = _notify
