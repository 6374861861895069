"""Lesson 01's lab tests: a transcript (point 1.1).

Lab1 checks user_message and chat: one exchange appends the user's message and the reply to the
caller's list and sends the whole list, so the list is the only memory. Each test's docstring is
its checklist line on the page, word for word; the tests run in the order they are written.

    python lab/lab_check.py --harness harness.py --lesson 1 tests.py

From lesson 3 on, chat is gone: run_agent took its place, and with no tools a run is exactly one
exchange. These tests then hold one exchange through run_agent, so that every later harness still
has lesson 1's property: it knows what was said, and who said it.
"""
import unittest

import harness
import lab

LESSON = 1


def chat(model, messages, text):
    """One exchange through the reader's harness: lesson 1's chat, or, once lesson 3 has
    replaced it, run_agent with no tools, which is the same exchange."""
    if not hasattr(harness, "chat") and hasattr(harness, "run_agent"):
        lab.drive(harness.run_agent(model, harness.SYSTEM, messages, [], text))
        return messages[-1]
    return harness.chat(model, messages, text)


def _sent(model, number):
    """What model call `number` (from 1) was sent, as lab.show prints it."""
    return lab.show(model.calls[number - 1].messages) or "(nothing)"


class Lab1(unittest.TestCase):

    def test_user_message(self):
        """user_message("My name is Ada.") is exactly {"role": "user", "content": "My name is Ada."}: a role that says who spoke, and the words as a plain string."""
        got = harness.user_message("My name is Ada.")
        self.assertEqual(got, {"role": "user", "content": "My name is Ada."},
                         "user_message should give a dict with two keys: role \"user\" and the "
                         "text itself, a plain string, as content")

    def test_chat_appends_two(self):
        """chat(model, messages, "My name is Ada.") appends two messages to your list, the user's and then the model's reply, and returns that reply."""
        model = lab.ScriptedModel([lab.forgetful()])
        messages = []
        reply = chat(model, messages, "My name is Ada.")
        self.assertEqual(len(messages), 2,
                         f"after one exchange the list you passed should hold 2 messages; it "
                         f"holds {len(messages)}:\n{lab.show(messages) or '(nothing)'}\n(chat "
                         "appends to the caller's list; it does not build a new one)")
        self.assertEqual(messages[0], harness.user_message("My name is Ada."),
                         "the first message should be the user's, made by user_message")
        self.assertEqual(messages[1]["role"], "assistant",
                         "the second message should be the model's reply, role \"assistant\"")
        self.assertIs(reply, messages[1], "chat should return the reply it appended")

    def test_reply_kept_as_it_came(self):
        """The reply goes on the list exactly as complete() returned it: a dict with role "assistant", its content blocks and its usage numbers, not rebuilt from its text."""
        model = lab.ScriptedModel([lab.say("Nice to meet you, Ada.")])
        messages = []
        chat(model, messages, "My name is Ada.")
        last = messages[-1]
        self.assertIsInstance(last.get("content"), list,
                              "the reply's content should still be the list of blocks the model "
                              f"sent; it is {last.get('content')!r}")
        self.assertEqual(last["content"], [lab.text("Nice to meet you, Ada.")])
        self.assertIn("usage", last, "the reply lost its usage numbers: append the message "
                                     "complete() returned, not a new one made from its words")

    def test_sends_everything(self):
        """On the third exchange the model is sent all five messages so far, oldest first, its own replies included, with the system prompt SYSTEM and no tools."""
        model = lab.ScriptedModel([lab.forgetful()] * 3)
        messages = []
        for text in ("My name is Ada.", "I live in Paris.", "What is my name?"):
            chat(model, messages, text)
        self.assertEqual(len(model.calls), 3, "three exchanges should make three model calls, "
                                              f"not {len(model.calls)}")
        third = model.calls[2]
        self.assertEqual(third.messages, messages[:5],
                         "call 3 should be sent the whole transcript up to the new question:\n"
                         f"{lab.show(messages[:5])}\nit was sent:\n{_sent(model, 3)}")
        self.assertEqual(third.system, harness.SYSTEM,
                         "every call should send SYSTEM as its system prompt")
        self.assertEqual(third.tools, [], "lesson 1's model has no tools: send []")

    def test_remembers_across_exchanges(self):
        """Told "My name is Ada." and then asked "What is my name?", the forgetful model answers "Your name is Ada.": it remembers only because the first exchange was sent again."""
        model = lab.ScriptedModel([lab.forgetful(), lab.forgetful()])
        messages = []
        chat(model, messages, "My name is Ada.")
        answer = chat(model, messages, "What is my name?")
        self.assertEqual(lab.show([answer]), 'assistant -> "Your name is Ada."',
                         "the second call should carry the first exchange; it was sent:\n"
                         f"{_sent(model, 2)}")

    def test_two_conversations_apart(self):
        """Two conversations held side by side stay apart: Ada's name is never sent in Bob's, and each model call is sent only its own list."""
        model = lab.ScriptedModel([lab.forever(lab.forgetful())])
        ada, bob = [], []
        chat(model, ada, "My name is Ada.")
        chat(model, bob, "My name is Bob.")
        chat(model, ada, "What is my name?")
        answer = chat(model, bob, "What is my name?")
        self.assertEqual(lab.show([answer]), 'assistant -> "Your name is Bob."')
        self.assertEqual(model.calls[3].messages, bob[:3],
                         "Bob's question should be sent Bob's conversation and nothing else; "
                         f"it was sent:\n{_sent(model, 4)}\n(a list kept outside chat, or in a "
                         "default argument, mixes every conversation into one)")
        self.assertEqual([len(ada), len(bob)], [4, 4],
                         "each list should hold its own four messages")

    def test_list_is_the_only_memory(self):
        """A conversation written by hand is remembered, and one the caller empties is forgotten: chat keeps no copy of its own, so the list you pass is all the model is sent."""
        model = lab.ScriptedModel([lab.forgetful(), lab.forgetful()])
        messages = [lab.user("My name is Ada."), lab.say("Nice to meet you, Ada.")]
        answer = chat(model, messages, "What is my name?")
        self.assertEqual(lab.show([answer]), 'assistant -> "Your name is Ada."',
                         "a transcript written by hand should be sent as it is; the model was "
                         f"sent:\n{_sent(model, 1)}")
        messages.clear()
        answer = chat(model, messages, "What is my name?")
        self.assertEqual(lab.show([answer]), 'assistant -> "I don\'t know your name."',
                         "the caller emptied the list, so the model should be sent only the new "
                         f"question; it was sent:\n{_sent(model, 2)}\n(chat must not keep a "
                         "history of its own)")


if __name__ == "__main__":
    unittest.main()
