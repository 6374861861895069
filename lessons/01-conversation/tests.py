"""Lesson 01's lab tests: a transcript (point 1.1).

Lab1 checks user_message and chat: one exchange appends the user's message and the reply to the
caller's list and sends the whole list, so the list is the only memory. Each test's docstring is
its checklist line on the page, word for word; the tests run in the order they are written.

    python lab/lab_check.py --harness harness.py --lesson 1 tests.py

From lesson 3 on, chat is gone: run_agent took its place, and with no tools a run is exactly one
exchange. These tests then hold one exchange through run_agent, so that every later harness still
has lesson 1's property: it knows what was said, and who said it.

The messages are written for the reader (longMessage = False): what was expected, what came. An
exception from the reader's code becomes a failure with a sentence, never an error.
"""
import collections
import copy
import types
import unittest

import harness
import lab

LESSON = 1


def _exchange(model, messages, text):
    """One exchange through the reader's harness: lesson 1's chat, or, once lesson 3 has
    replaced it, run_agent with no tools, which is the same exchange."""
    if not hasattr(harness, "chat") and hasattr(harness, "run_agent"):
        lab.drive(harness.run_agent(model, harness.SYSTEM, messages, [], text))
        return messages[-1] if messages else None
    return harness.chat(model, messages, text)


def _sent(model, number):
    """What model call `number` (from 1) was sent, as lab.show prints it."""
    if len(model.calls) < number:
        return "(there was no call %d)" % number
    sent = model.calls[number - 1].messages
    if len(sent) > 8:           # a long request: its start, and how much more there was
        return lab.show(sent[:6]) + f"\n... and {len(sent) - 6} more messages"
    return lab.show(sent) or "(nothing)"


def _listing(messages):
    return lab.show(messages) or "(nothing)"


def _answer(messages):
    """The last message of a list, the model's answer, as lab.show prints it."""
    if not messages:
        return "(nothing: the list is empty)"
    last = messages[-1]
    return lab.show([last]) if isinstance(last, dict) else repr(last)


def _first_difference(expected, got):
    """Where two lists of messages part: a sentence, or '' if they are equal."""
    for i, (want, have) in enumerate(zip(expected, got)):
        if want != have:
            return (f"message {i + 1} should be {lab.show([want])}, but it is "
                    f"{lab.show([have]) if isinstance(have, dict) else repr(have)}")
    if len(expected) != len(got):
        return f"{len(expected)} messages were expected, and there were {len(got)}"
    return ""


class _Keeping(lab.ScriptedModel):
    """A scripted model that also keeps every reply it handed back, so a test can ask whether the
    reply on the list is that very dict, and a copy of it as it was handed back, so a test can ask
    whether anything was added to it or changed in it since."""

    def __init__(self, steps):
        super().__init__(steps)
        self.replies = []
        self.as_sent = []

    def complete(self, system, messages, tools=None):
        reply = super().complete(system, messages, tools)
        self.replies.append(reply)
        self.as_sent.append(copy.deepcopy(reply))
        return reply


class _Tools(lab.ScriptedModel):
    """A scripted model that also keeps the tools argument exactly as each call passed it: the
    request it records turns None into [], and lesson 1's spec says to send [] itself."""

    def __init__(self, steps):
        super().__init__(steps)
        self.tools_passed = []

    def complete(self, system, messages, tools=None):
        self.tools_passed.append(tools)
        return super().complete(system, messages, tools)


class Lab1(unittest.TestCase):
    longMessage = False

    def chat(self, model, messages, text):
        """Call the reader's chat; an exception in it fails the test with a sentence."""
        try:
            return _exchange(model, messages, text)
        except Exception as error:  # the reader's code, not the test, raised
            self.fail(f"chat(model, messages, {text!r}) raised {type(error).__name__}: {error}")

    def user_message(self, text):
        try:
            return harness.user_message(text)
        except Exception as error:
            self.fail(f"user_message({text!r}) raised {type(error).__name__}: {error}")

    def test_user_message(self):
        """user_message("My name is Ada.") is exactly {"role": "user", "content": "My name is Ada."}: a role that says who spoke, and the words as a plain string."""
        got = self.user_message("My name is Ada.")
        want = {"role": "user", "content": "My name is Ada."}
        if not isinstance(got, dict):
            self.fail(f"user_message should return a dict; it returned {got!r}")
        if got.get("role") != "user":
            self.fail(f"the role should be \"user\"; it is {got.get('role')!r}")
        if not isinstance(got.get("content"), str):
            self.fail("the content should be the plain string the user typed, not "
                      f"{got.get('content')!r}")
        if got != want:
            self.fail(f"user_message should give exactly {want!r}, two keys and nothing else; "
                      f"it gave {got!r}")

    def test_user_message_as_typed(self):
        """user_message keeps the words exactly as typed: spaces at the edges, a tab, line breaks ("\\n" and "\\r\\n"), an accent typed as two characters, and an empty string."""
        for text in ("  two spaces, then words  ", "line one\nline two", "line one\r\nline two",
                     "a\ttab", "Ade\u0301le", ""):
            got = self.user_message(text)
            content = got.get("content") if isinstance(got, dict) else got
            if content != text:
                self.fail(f"user_message({text!a}) should keep {text!a} as its content; the "
                          f"content is {content!a}. Put the text in as it came: no stripping, no "
                          "changing line endings or tabs, no normalising")

    def test_user_message_new_each_time(self):
        """Every call of user_message makes a new dict: called twice with "What is my name?", it returns two equal dicts, not the same dict twice."""
        first = self.user_message("What is my name?")
        second = self.user_message("What is my name?")
        if not isinstance(first, dict):
            self.fail(f"user_message(\"What is my name?\") should build a new dict on each call; "
                      f"it returned {first!r}")
        if first is second:
            self.fail("user_message(\"What is my name?\") returned the very same dict both times. "
                      "A dict handed out again is one message shared by every list that holds it: "
                      "a change to it changes each of them. Build a new dict on every call, and "
                      "keep no cache of messages")
        if first != second:
            self.fail(f"the same words should make equal messages; the two calls gave {first!r} "
                      f"and {second!r}")

    def test_chat_keeps_text_as_typed(self):
        """chat puts the user's words first on your list, and in the request, exactly as typed: "  My name is Ada.\\n" keeps its spaces and its line break."""
        text = "  My name is Ada.\n"
        model = lab.ScriptedModel([lab.forgetful()])
        messages = []
        self.chat(model, messages, text)
        first = messages[0] if messages and isinstance(messages[0], dict) else {}
        if first.get("role") != "user":
            self.fail("after one exchange the list you passed should start with the user's "
                      f"message; it holds {_listing(messages)}. Append user_message(text) to "
                      "that very list, first and before anything else")
        if first.get("content") != text:
            self.fail(f"the user typed {text!r}, and the first message on your list should hold "
                      f"exactly that; it holds {first.get('content')!r}. Pass the text to "
                      "user_message as it came: tidying it changes what the user said")
        sent = model.calls[0].messages[-1] if model.calls and model.calls[0].messages else {}
        sent = sent if isinstance(sent, dict) else {}
        if sent.get("content") != text:
            self.fail(f"call 1 should be sent the user's words as typed, {text!r}; it was sent "
                      f"{sent.get('content')!r}")

    def test_chat_appends_two(self):
        """chat(model, messages, "My name is Ada.") appends two messages to your list, the user's and then the model's reply."""
        model = lab.ScriptedModel([lab.forgetful()])
        messages = []
        self.chat(model, messages, "My name is Ada.")
        if len(messages) != 2:
            self.fail(f"after one exchange the list you passed should hold 2 messages; it holds "
                      f"{len(messages)}:\n{_listing(messages)}\n(chat appends to the caller's "
                      "list: no new list, and nothing else on it)")
        if messages[0] != {"role": "user", "content": "My name is Ada."}:
            self.fail("the first message should be the user's, as user_message makes it; it is "
                      f"{messages[0]!r}")
        if not isinstance(messages[1], dict) or messages[1].get("role") != "assistant":
            self.fail("the second message should be the model's reply, role \"assistant\"; it is "
                      f"{messages[1]!r}")

    def test_returns_the_reply(self):
        """chat returns the reply it appended: the very dict now at the end of your list, not its text."""
        model = lab.ScriptedModel([lab.forgetful()])
        messages = []
        reply = self.chat(model, messages, "My name is Ada.")
        if not messages:
            self.fail("chat appended nothing to your list, so there is no reply to return")
        if reply is not messages[-1]:
            self.fail("chat should return the message it appended last, the model's reply; it "
                      f"returned {reply!r}")

    def test_reply_kept_as_it_came(self):
        """The reply goes on the list exactly as complete() returned it: the very dict, with its content blocks, its stop reason and its usage numbers, not rebuilt from its text, copied, or given a key of its own."""
        model = _Keeping([lab.say("Nice to meet you, Ada.")])
        messages = []
        self.chat(model, messages, "My name is Ada.")
        if not model.calls:
            self.fail("chat never called model.complete")
        if not messages:
            self.fail("chat appended nothing to your list; the reply should be on the end of it")
        last = messages[-1]
        if not isinstance(last, dict):
            self.fail(f"the last message should be the reply dict; it is {last!r}")
        sent = lab.say("Nice to meet you, Ada.")
        if last.get("content") != sent["content"]:
            self.fail("the reply's content should still be the list of blocks the model sent, "
                      f"{sent['content']!r}; it is {last.get('content')!r}")
        for key in ("role", "stop_reason", "usage"):
            if key not in last:
                self.fail(f"the reply on your list lost its {key!r}: append the message "
                          "complete() returned, whole, not a new one built from parts of it")
        if last["stop_reason"] != sent["stop_reason"]:
            self.fail(f"the reply's stop reason should be {sent['stop_reason']!r}, as it came; "
                      f"it is {last['stop_reason']!r}")
        if last["role"] != "assistant":
            self.fail(f"the reply's role should be \"assistant\", as it came; it is {last['role']!r}")
        counted = lab.usage(model.calls[0], sent)
        if last["usage"] != counted:
            self.fail(f"the reply's usage should be {counted!r}, the numbers complete() put on it; "
                      f"it is {last['usage']!r}")
        if last is not model.replies[0]:
            self.fail("the last message on your list is an equal copy of the reply, not the dict "
                      "complete() returned: append the reply itself")
        came = model.as_sent[0]
        added = sorted(set(last) - set(came), key=str)
        if added:
            self.fail(f"the reply on your list has key(s) complete() did not put on it: "
                      f"{', '.join(map(repr, added))}. Append the reply exactly as it came back: "
                      "the transcript records what the model said, so add nothing to it")
        if last != came:
            self.fail(f"the reply on your list was changed after complete() returned it: it came "
                      f"back as {came!r} and your list holds {last!r}. Append it as it came")

    def test_sends_everything(self):
        """On the third exchange the model is sent all five messages so far, oldest first, its own replies included, with the system prompt SYSTEM and no tools."""
        model = _Tools([lab.forgetful()] * 3)
        messages = []
        for text in ("My name is Ada.", "I live in Paris.", "What is my name?"):
            self.chat(model, messages, text)
        if len(model.calls) != 3:
            self.fail(f"three exchanges should make three model calls, not {len(model.calls)}")
        third = model.calls[2]
        roles = [m.get("role") if isinstance(m, dict) else "?" for m in third.messages]
        if roles != ["user", "assistant", "user", "assistant", "user"]:
            self.fail("call 3 should be sent five messages, user, assistant, user, assistant, "
                      f"user; it was sent {', '.join(roles) or 'nothing'}:\n{_sent(model, 3)}")
        gap = _first_difference(messages[:5], third.messages)
        if gap:
            self.fail("call 3 should be sent the whole transcript up to the new question:\n"
                      f"{_listing(messages[:5])}\nit was sent:\n{_sent(model, 3)}\n({gap})")
        if third.system != harness.SYSTEM:
            self.fail(f"call 3 should be sent SYSTEM as its system prompt; it was sent "
                      f"{third.system!r}")
        passed = model.tools_passed[2] if len(model.tools_passed) > 2 else third.tools
        if third.tools != [] or not isinstance(passed, list):
            self.fail("lesson 1's model has no tools: pass the empty list [] as complete()'s "
                      f"third argument; call 3 was passed {passed!r}")

    def test_system_every_call(self):
        """Every call, not only the first, is sent SYSTEM as its system prompt: four exchanges, four times."""
        model = lab.ScriptedModel([lab.forever(lab.forgetful())])
        messages = []
        for text in ("Hello.", "My name is Ada.", "I like tea.", "What is my name?"):
            self.chat(model, messages, text)
        systems = [call.system for call in model.calls]
        if len(systems) != 4:
            self.fail(f"four exchanges should make four model calls, not {len(systems)}")
        for n, system in enumerate(systems, 1):
            if system != harness.SYSTEM:
                self.fail(f"call {n} was sent the system prompt {system!r}, not SYSTEM: the "
                          "model keeps nothing, so every request carries its instructions")

    def test_system_as_it_stands(self):
        """The system prompt sent is SYSTEM as it stands when chat runs: set SYSTEM to "Be brief." and the next call is sent "Be brief.", not a copy of the old words."""
        saved = harness.SYSTEM
        try:
            harness.SYSTEM = "Be brief."
            model = lab.ScriptedModel([lab.forgetful()])
            self.chat(model, [], "My name is Ada.")
        finally:
            harness.SYSTEM = saved
        sent = model.calls[0].system if model.calls else "(no call was made)"
        if sent != "Be brief.":
            self.fail(f"with SYSTEM set to 'Be brief.', the call was sent {sent!r}: pass SYSTEM "
                      "itself to complete(), not the words of the prompt typed out again")

    def test_system_not_in_transcript(self):
        """The system prompt stays out of the transcript: after two exchanges your list holds user, assistant, user, assistant, and nothing else."""
        model = lab.ScriptedModel([lab.forgetful(), lab.forgetful()])
        messages = []
        self.chat(model, messages, "My name is Ada.")
        self.chat(model, messages, "What is my name?")
        roles = [m.get("role") if isinstance(m, dict) else type(m).__name__ for m in messages]
        if roles != ["user", "assistant", "user", "assistant"]:
            self.fail("after two exchanges the list should hold the roles user, assistant, user, "
                      f"assistant; it holds {', '.join(map(str, roles)) or 'nothing'}\n(SYSTEM "
                      "goes to complete() as its own argument, not into the list)")

    def test_remembers_across_exchanges(self):
        """Told "My name is Ada." and then asked "What is my name?", the forgetful model answers "Your name is Ada.": it remembers only because the first exchange was sent again."""
        model = lab.ScriptedModel([lab.forgetful(), lab.forgetful()])
        messages = []
        self.chat(model, messages, "My name is Ada.")
        self.chat(model, messages, "What is my name?")
        got = _answer(messages)
        if got != 'assistant -> "Your name is Ada."':
            self.fail("the second call should carry the first exchange, and the answer should "
                      f"be 'Your name is Ada.'; the answer was {got}, and the call was sent:\n"
                      f"{_sent(model, 2)}")

    def test_thirty_exchanges(self):
        """Over thirty exchanges call n is sent 2n - 1 messages: each request is the one before, plus the last reply and the new question, with nothing cut from the start."""
        model = lab.ScriptedModel([lab.forever(lab.forgetful())])
        messages = []
        for n in range(1, 31):
            self.chat(model, messages, f"Note number {n}.")
        if len(model.calls) != 30:
            self.fail(f"thirty exchanges should make thirty model calls, not {len(model.calls)}")
        for n, call in enumerate(model.calls, 1):
            if len(call.messages) != 2 * n - 1:
                self.fail(f"call {n} should be sent {2 * n - 1} message(s); it was sent "
                          f"{len(call.messages)}" + (f", starting {lab.show(call.messages[:1])}"
                                                     if call.messages else ""))
            gap = _first_difference(messages[:2 * n - 1], call.messages)
            if gap:
                self.fail(f"call {n} should be sent the transcript so far, oldest first; {gap}")

    def test_long_list_sent_whole(self):
        """A list that already holds 1,000 messages is sent whole: the call is sent all 1,001, the first message of the list first, however long the conversation has grown."""
        messages = []
        for n in range(1, 501):
            messages += [lab.user(f"Note number {n}."), lab.say(f"Noted: {n}.")]
        model = lab.ScriptedModel([lab.forgetful()])
        self.chat(model, messages, "What was note number 1?")
        if len(model.calls) != 1:
            self.fail(f"one exchange should make one model call, not {len(model.calls)}")
        sent = model.calls[0].messages
        if len(sent) != 1001:
            self.fail("your list held 1,000 messages before the question, so the call should be "
                      f"sent 1,001; it was sent {len(sent)}, starting "
                      f"{lab.show(sent[:1]) or '(nothing)'}. Send the whole list, however long: "
                      "whatever is cut from the start, the model never heard")
        gap = _first_difference(messages[:1001], sent)
        if gap:
            self.fail(f"the call should be sent your list as it stands, oldest first; {gap}")

    def test_empty_message_sent(self):
        """An empty message is still a message: chat(model, messages, "") sends the user's empty message to the model, and nothing is filtered out of the list."""
        model = lab.ScriptedModel([lab.forever(lab.forgetful())])
        messages = []
        self.chat(model, messages, "")
        empty = {"role": "user", "content": ""}
        if not model.calls:
            self.fail("chat(model, messages, \"\") should make one model call; it made none")
        if empty not in model.calls[0].messages:
            self.fail("the user sent an empty message, and call 1 should be sent it as "
                      f"{empty!r}; it was sent:\n{_sent(model, 1)}\n(send the list as it "
                      "is: do not leave out messages with no words)")
        if not messages or messages[0] != empty:
            self.fail(f"your list should start with the user's empty message, {empty!r}; it "
                      f"holds {_listing(messages)}. Keep it on the list like any other")

    def test_same_words_twice(self):
        """The same words twice are two messages: asking "What is my name?" twice leaves four messages on your list, the two questions two dicts, not one dict twice, and call 2 is sent three."""
        model = lab.ScriptedModel([lab.forever(lab.forgetful())])
        messages = []
        self.chat(model, messages, "What is my name?")
        self.chat(model, messages, "What is my name?")
        roles = [m.get("role") if isinstance(m, dict) else "?" for m in messages]
        if roles != ["user", "assistant", "user", "assistant"]:
            self.fail("the user asked the same question twice, and your list should hold both "
                      f"questions and both replies; it holds {_listing(messages)}. Every message "
                      "goes on the list, even one that repeats an earlier one")
        if messages[0] is messages[2]:
            self.fail("your list holds the first question twice, the very same dict at places 1 "
                      "and 3, not two messages: make a new message for every exchange")
        sent = len(model.calls[1].messages) if len(model.calls) > 1 else 0
        if sent != 3:
            self.fail(f"call 2 should be sent three messages, the second question included; it "
                      f"was sent {sent}:\n{_sent(model, 2)}")

    def test_empty_reply_kept(self):
        """A reply with nothing in its content is still the reply: it goes on your list, after the user's message, chat returns it, and the next exchange sends it to the model with the rest."""
        empty = {"role": "assistant", "content": [], "stop_reason": "stop"}
        model = lab.ScriptedModel([empty, lab.forgetful()])
        messages = []
        reply = self.chat(model, messages, "Hello?")
        roles = [m.get("role") if isinstance(m, dict) else "?" for m in messages]
        if roles != ["user", "assistant"]:
            self.fail(f"the model answered with an empty reply, and your list should hold the "
                      f"user's message and that reply; it holds {_listing(messages)}. Append "
                      "every reply as it came, words or none")
        if reply is not messages[-1]:
            self.fail(f"chat should return the empty reply it appended; it returned {reply!r}")
        self.chat(model, messages, "Are you there?")
        sent = model.calls[1].messages if len(model.calls) > 1 else []
        want = messages[:3]            # the list itself was checked above: user, empty reply
        gap = _first_difference(want, sent)
        if gap:
            self.fail("the next exchange should send the whole list, the empty reply included:\n"
                      f"{_listing(want)}\ncall 2 was sent:\n{_sent(model, 2)}\n({gap}; send "
                      "the list as it is, and leave out no message, not even one with no words)")

    def test_model_error_goes_up(self):
        """When the model call raises, chat raises that same error to its caller, and the user's message is on your list already: chat catches nothing."""
        down = ConnectionError("the network is down")
        model = lab.ScriptedModel([lab.raises(down)])
        messages = []
        try:
            _exchange(model, messages, "My name is Ada.")
        except ConnectionError as error:
            if error is not down:
                self.fail("chat raised a new ConnectionError of its own; let the one the model "
                          "raised go up as it is")
        except Exception as error:  # the reader's code raised something else
            self.fail(f"the model raised ConnectionError, and chat raised {type(error).__name__}: "
                      f"{error}. Let the model's own error go up to the caller")
        else:
            self.fail("the model raised ConnectionError, and chat returned as if the exchange "
                      f"had happened; your list holds {_listing(messages)}. Catch nothing: the "
                      "caller has to hear that there is no reply")
        want = [{"role": "user", "content": "My name is Ada."}]
        if messages != want:
            held = _listing(messages)
            if held == _listing(want):      # the same on screen: show the dicts themselves
                held = repr(messages)
            self.fail("when the model call fails, your list should hold the user's message and "
                      f"nothing else, {want[0]!r}; it holds {held}. Append the user's message "
                      "first, then call the model")

    def test_two_conversations_apart(self):
        """Two conversations held side by side stay apart: Ada's name is never sent in Bob's, and each model call is sent only its own list."""
        model = lab.ScriptedModel([lab.forever(lab.forgetful())])
        ada, bob = [], []
        self.chat(model, ada, "My name is Ada.")
        self.chat(model, bob, "My name is Bob.")
        self.chat(model, ada, "What is my name?")
        self.chat(model, bob, "What is my name?")
        for n, call in enumerate(model.calls, 1):
            own = ada if n in (1, 3) else bob
            who = "Ada's" if own is ada else "Bob's"
            size = 1 if n <= 2 else 3
            gap = _first_difference(own[:size], call.messages)
            if gap:
                self.fail(f"call {n} should be sent {who} conversation and nothing else; it was "
                          f"sent:\n{_sent(model, n)}\n({gap}; a list kept outside chat, or in a "
                          "default argument, mixes every conversation into one)")
        got = _answer(bob)
        if got != 'assistant -> "Your name is Bob."':
            self.fail(f"Bob should be told his own name; he was told {got}")
        if [len(ada), len(bob)] != [4, 4]:
            self.fail(f"each list should hold its own four messages; Ada's holds {len(ada)}, "
                      f"Bob's {len(bob)}")

    def test_list_is_the_only_memory(self):
        """A conversation written by hand is remembered, and one the caller empties is forgotten: the list you pass is all the model is sent."""
        model = lab.ScriptedModel([lab.forgetful(), lab.forgetful()])
        messages = [lab.user("My name is Ada."), lab.say("Nice to meet you, Ada.")]
        self.chat(model, messages, "What is my name?")
        got = _answer(messages)
        if got != 'assistant -> "Your name is Ada."':
            self.fail("a transcript written by hand should be sent as it is, and the answer "
                      f"should be 'Your name is Ada.'; it was {got}, and the model was sent:\n"
                      f"{_sent(model, 1)}")
        messages.clear()
        self.chat(model, messages, "What is my name?")
        got = _answer(messages)
        if got != 'assistant -> "I don\'t know your name."':
            self.fail("the caller emptied the list, so the model should be sent only the new "
                      f"question and not know the name; it answered {got}, and was sent:\n"
                      f"{_sent(model, 2)}\n(chat must not keep a history of its own)")


    def test_chat_only_adds(self):
        """chat only adds to your list: a list that already ends on a user message, as a failed call leaves it, keeps that message even when the same words are sent again, the model is sent both, and afterwards the list holds user, user, assistant."""
        first = lab.user("What is my name?")
        messages = [first]
        model = lab.ScriptedModel([lab.forgetful()])
        self.chat(model, messages, "What is my name?")
        if not messages or messages[0] is not first or first != lab.user("What is my name?"):
            self.fail("your list started with a user message a failed call had left on it, "
                      "\"What is my name?\", and chat took it away or changed it; the list now "
                      f"holds:\n{_listing(messages)}\nAppend to the list, and leave what is on it "
                      "as it is")
        roles = [m.get("role") if isinstance(m, dict) else "?" for m in messages]
        if roles != ["user", "user", "assistant"]:
            self.fail("a failed call had left \"What is my name?\" on the list, and chat was "
                      "called again with the same words: the list should then hold user, user, "
                      f"assistant, the retry added as a message of its own; it holds "
                      f"{_listing(messages)}")
        sent = model.calls[0].messages if model.calls else []
        if list(sent) != [first, lab.user("What is my name?")]:
            self.fail("the list held the failed call's question and then the retry, and call 1 "
                      f"should be sent both, as the list holds them; it was sent:\n"
                      f"{_sent(model, 1)}\nSend the whole list as it is: leave nothing out of the "
                      "request, not even a message that repeats the one before it")

    def test_no_copy_of_its_own(self):
        """chat keeps no copy of the conversation: after two exchanges no list, dict or set in harness.py, at its top level, on an object or function there, or in a variable a function there closes over, holds their messages, and chat reads no such thing kept outside it or in a default argument."""
        model = lab.ScriptedModel([lab.forever(lab.forgetful())])
        messages = []
        self.chat(model, messages, "My name is Ada.")
        self.chat(model, messages, "What is my name?")
        said = [m for m in messages if isinstance(m, (dict, list))]
        for name, value in sorted(vars(harness).items()):
            if value is not messages and _holds(value, said):
                self.fail(f"harness.{name} holds messages of the conversation too: chat keeps a "
                          "copy of its own. Keep none; the caller's list is the only memory")
        for name, value in sorted(vars(harness).items()):
            if isinstance(value, types.ModuleType):
                continue
            try:
                attributes = dict(vars(value))
            except TypeError:           # no __dict__: a number, a string, a list
                continue
            for attribute, held in sorted(attributes.items()):
                # a handle on the caller's own list is not a copy; a list holding their messages is
                if held is not messages and _holds(held, said):
                    self.fail(f"harness.{name}.{attribute} holds messages of the conversation "
                              "too: chat keeps a copy of its own on an object. Keep none; the "
                              "caller's list is the only memory")
        for name, value in sorted(vars(harness).items()):
            for number, cell in enumerate(getattr(value, "__closure__", None) or (), 1):
                try:
                    held = cell.cell_contents
                except ValueError:      # a cell not filled yet
                    continue
                names = getattr(getattr(value, "__code__", None), "co_freevars", ())
                what = names[number - 1] if number <= len(names) else f"variable {number}"
                if held is not messages and _holds(held, said):
                    self.fail(f"harness.{name} closes over {what}, which holds messages of the "
                              "conversation too: chat keeps a copy of its own in a closure. Keep "
                              "none; the caller's list is the only memory")
        chat = getattr(harness, "chat", None)
        if not callable(chat) or not hasattr(chat, "__code__"):
            return                      # from lesson 3 on, run_agent does the exchange
        defaults = list(chat.__defaults__ or ()) + list((chat.__kwdefaults__ or {}).values())
        for value in defaults:
            if isinstance(value, _KEEPERS):
                self.fail(f"chat has a default argument holding a {type(value).__name__}, "
                          f"{value!r}: Python makes it once and every call shares it. Take the "
                          "caller's list and keep none of your own")
        for name in _global_names(chat.__code__):
            value = vars(harness).get(name)
            if isinstance(value, _KEEPERS):
                self.fail(f"chat reads harness.{name}, a {type(value).__name__} kept outside the "
                          "function, so a conversation could go into it. Keep none; the caller's "
                          "list is the only memory")


_KEEPERS = (list, dict, set, bytearray, collections.deque)


def _holds(value, said):
    """Whether `value`, a container, holds one of the messages in `said` (the very objects or
    equal ones), at the top or one level down."""
    if isinstance(value, dict):
        items = list(value.values())
    elif isinstance(value, (list, tuple, set, collections.deque)):
        items = list(value)
    else:
        return False
    for item in items:
        if any(item is m or item == m for m in said):
            return True
        inner = item.values() if isinstance(item, dict) else item if isinstance(
            item, (list, tuple, collections.deque)) else ()
        if any(x is m or x == m for x in inner for m in said):
            return True
    return False


def _global_names(code):
    """The global names a function's code (and the code nested in it: a comprehension, a lambda,
    a def inside it) may read, sorted."""
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names.update(_global_names(const))
    return sorted(names)


if __name__ == "__main__":
    unittest.main()
