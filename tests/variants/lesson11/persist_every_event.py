# Wrong design: the saver writes down every event, not only message_end. The log then holds
# entries that are not messages of the transcript.
def persist_to(log):
    def listener(event):
        log.append_message(event.get("message", event))
    return listener
