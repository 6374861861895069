# Wrong design: _notify walks the live list. A listener that unsubscribes mid-walk shortens the
# list under the for, and the loop skips the listener after it.
def _notify(self, event):
    for listener in self._listeners:
        listener(event)


Harness._notify = _notify
