#!/usr/bin/env python3
"""Generates resources/corpus.txt, the English-prose corpus that ships with NormLab.

Written for NormLab. The generator and its output (resources/corpus.txt) may be freely
redistributed, modified and used for any purpose.

The text comes from a small probabilistic grammar: a village story told in short paragraphs
(narration with subordinate and relative clauses, descriptions, numbers, dialogue lines and the odd
chapter heading) over a vocabulary of a few hundred words. A byte-level language model has real
structure to learn (letter statistics, words, agreement, punctuation, quoting) while the random
choices keep 60 KB far from memorisable in a few hundred steps. The output is plain ASCII and is a
pure function of SEED: run `python3 scripts/make_corpus.py` to regenerate it byte for byte.
"""

import argparse
import os
import random

SEED = 20240611
TARGET_BYTES = 60 * 1024

# --- vocabulary ---------------------------------------------------------------------------------

CHARACTERS = [
    ("Mara", "she"), ("Tomas", "he"), ("Elena", "she"), ("Jonah", "he"), ("Ines", "she"),
    ("Arthur", "he"), ("Lucia", "she"), ("Felix", "he"), ("Nadia", "she"), ("Oscar", "he"),
    ("Hana", "she"), ("Victor", "he"), ("Clara", "she"), ("Rowan", "he"), ("Ada", "she"),
    ("Simon", "he"), ("Greta", "she"), ("Milo", "he"), ("Iris", "she"), ("Bruno", "he"),
]

# (singular, plural)
PEOPLE = [
    ("farmer", "farmers"), ("teacher", "teachers"), ("sailor", "sailors"), ("baker", "bakers"),
    ("doctor", "doctors"), ("child", "children"), ("woman", "women"), ("man", "men"),
    ("stranger", "strangers"), ("merchant", "merchants"), ("captain", "captains"),
    ("soldier", "soldiers"), ("girl", "girls"), ("boy", "boys"), ("neighbour", "neighbours"),
    ("traveller", "travellers"), ("clerk", "clerks"), ("miller", "millers"),
    ("fisherman", "fishermen"), ("widow", "widows"), ("student", "students"),
    ("musician", "musicians"), ("guard", "guards"), ("shepherd", "shepherds"),
    ("carpenter", "carpenters"), ("postman", "postmen"),
]

THINGS = [
    ("lamp", "lamps"), ("letter", "letters"), ("basket", "baskets"), ("key", "keys"),
    ("coat", "coats"), ("boat", "boats"), ("book", "books"), ("map", "maps"),
    ("bottle", "bottles"), ("knife", "knives"), ("rope", "ropes"), ("box", "boxes"),
    ("loaf", "loaves"), ("apple", "apples"), ("candle", "candles"), ("bell", "bells"),
    ("coin", "coins"), ("stone", "stones"), ("cup", "cups"), ("blanket", "blankets"),
    ("hat", "hats"), ("wagon", "wagons"), ("horse", "horses"), ("dog", "dogs"),
    ("goat", "goats"), ("ladder", "ladders"), ("window", "windows"), ("door", "doors"),
    ("chair", "chairs"), ("clock", "clocks"), ("ring", "rings"), ("photograph", "photographs"),
    ("umbrella", "umbrellas"), ("bucket", "buckets"), ("net", "nets"), ("fence", "fences"),
    ("shovel", "shovels"), ("kettle", "kettles"), ("violin", "violins"), ("parcel", "parcels"),
    ("egg", "eggs"), ("jar", "jars"), ("sack", "sacks"), ("compass", "compasses"),
]

PLACES = [
    "the river", "the market", "the harbour", "the church", "the bridge", "the forest",
    "the hill", "the kitchen", "the station", "the school", "the mill", "the square",
    "the road", "the orchard", "the village", "the inn", "the library", "the cellar",
    "the barn", "the shore", "the garden", "the bakery", "the lighthouse", "the meadow",
    "the well", "the post office", "the old tower", "the valley",
]

PLACE_PREPS = ["near", "behind", "beside", "outside", "by", "not far from", "at the edge of",
               "on the way to", "across from", "near", "beside"]

# adjectives for things (attributive and predicative)
ADJECTIVES = [
    "old", "small", "large", "heavy", "bright", "dark", "cold", "warm", "narrow", "wide",
    "broken", "empty", "strange", "familiar", "wooden", "silver", "red", "green", "blue", "grey",
    "yellow", "rough", "smooth", "wet", "dry", "thin", "tall", "ancient", "new", "dusty",
    "crooked", "clean", "precious", "ordinary", "useful", "tiny", "enormous", "rusty", "painted",
    "folded", "borrowed", "expensive", "cheap", "light", "shiny", "damp", "sturdy",
]

# adjectives for people (attributive); PREDICATIVE adds the ones that only follow "was"
PERSON_ADJECTIVES = [
    "tired", "patient", "angry", "gentle", "strange", "careful", "clever", "honest", "nervous",
    "proud", "sleepy", "cheerful", "stubborn", "hungry", "curious", "brave", "quiet", "young",
    "old", "kind", "worried", "restless", "calm", "surprised", "pleased", "elderly", "silent",
]
PREDICATIVE = PERSON_ADJECTIVES + ["afraid", "certain", "alone", "awake", "asleep", "unwell", "sure"]
TOO_ADJECTIVES = ["tired", "nervous", "proud", "sleepy", "stubborn", "hungry", "afraid", "angry",
                  "worried", "restless", "cold", "weak", "busy", "frightened", "shy"]
AN_WORDS = {"honest", "hour", "elderly", "old", "ancient", "empty", "enormous", "expensive", "egg",
            "apple", "umbrella", "angry", "orchard", "ordinary", "inn", "anxious", "afraid"}

WEATHER = [
    "the rain had stopped", "the wind was rising", "a thin fog lay over the fields",
    "the sky was the colour of slate", "snow had fallen in the night", "the sun was already low",
    "the air smelled of smoke and apples", "thunder rolled somewhere beyond the hills",
    "the first frost had come early", "the evening was warm and still",
]

ADVERBS = [
    "slowly", "quickly", "quietly", "carefully", "suddenly", "gently", "loudly", "softly",
    "eagerly", "nervously", "patiently", "happily", "sadly", "calmly", "firmly", "briefly",
    "proudly", "silently", "cheerfully", "anxiously", "politely", "stubbornly", "wearily",
]

PRE_ADVERBS = ["finally", "almost", "rarely", "often", "barely", "already", "never", "always", "once"]

# (base, past, third person singular, past participle)
TRANSITIVE = [
    ("carry", "carried", "carries", "carried"), ("open", "opened", "opens", "opened"),
    ("close", "closed", "closes", "closed"), ("find", "found", "finds", "found"),
    ("lose", "lost", "loses", "lost"), ("mend", "mended", "mends", "mended"),
    ("paint", "painted", "paints", "painted"), ("sell", "sold", "sells", "sold"),
    ("buy", "bought", "buys", "bought"), ("borrow", "borrowed", "borrows", "borrowed"),
    ("hide", "hid", "hides", "hidden"), ("watch", "watched", "watches", "watched"),
    ("clean", "cleaned", "cleans", "cleaned"), ("fill", "filled", "fills", "filled"),
    ("lift", "lifted", "lifts", "lifted"), ("drop", "dropped", "drops", "dropped"),
    ("push", "pushed", "pushes", "pushed"), ("pull", "pulled", "pulls", "pulled"),
    ("count", "counted", "counts", "counted"), ("bring", "brought", "brings", "brought"),
    ("take", "took", "takes", "taken"), ("keep", "kept", "keeps", "kept"),
    ("hold", "held", "holds", "held"), ("wash", "washed", "washes", "washed"),
    ("throw", "threw", "throws", "thrown"), ("catch", "caught", "catches", "caught"),
    ("build", "built", "builds", "built"), ("break", "broke", "breaks", "broken"),
    ("fix", "fixed", "fixes", "fixed"), ("steal", "stole", "steals", "stolen"),
    ("wrap", "wrapped", "wraps", "wrapped"), ("polish", "polished", "polishes", "polished"),
    ("examine", "examined", "examines", "examined"), ("fetch", "fetched", "fetches", "fetched"),
    ("load", "loaded", "loads", "loaded"), ("weigh", "weighed", "weighs", "weighed"),
]

# verbs whose object is a person
SOCIAL = [
    ("greet", "greeted", "greets", "greeted"), ("thank", "thanked", "thanks", "thanked"),
    ("follow", "followed", "follows", "followed"), ("call", "called", "calls", "called"),
    ("visit", "visited", "visits", "visited"), ("ignore", "ignored", "ignores", "ignored"),
    ("remember", "remembered", "remembers", "remembered"), ("help", "helped", "helps", "helped"),
    ("warn", "warned", "warns", "warned"), ("trust", "trusted", "trusts", "trusted"),
    ("meet", "met", "meets", "met"), ("find", "found", "finds", "found"),
    ("wait for", "waited for", "waits for", "waited for"), ("look at", "looked at", "looks at", "looked at"),
]

INTRANSITIVE = [
    ("walk", "walked", "walks"), ("run", "ran", "runs"), ("laugh", "laughed", "laughs"),
    ("sing", "sang", "sings"), ("wait", "waited", "waits"), ("sleep", "slept", "sleeps"),
    ("smile", "smiled", "smiles"), ("listen", "listened", "listens"),
    ("whisper", "whispered", "whispers"), ("shout", "shouted", "shouts"),
    ("arrive", "arrived", "arrives"), ("return", "returned", "returns"),
    ("hesitate", "hesitated", "hesitates"), ("nod", "nodded", "nods"), ("sigh", "sighed", "sighs"),
    ("rest", "rested", "rests"), ("stay", "stayed", "stays"), ("work", "worked", "works"),
    ("wander", "wandered", "wanders"), ("pause", "paused", "pauses"), ("cough", "coughed", "coughs"),
    ("shiver", "shivered", "shivers"), ("frown", "frowned", "frowns"), ("kneel", "knelt", "kneels"),
]

MOTION = [("walked", "walk"), ("ran", "run"), ("hurried", "hurry"), ("drove", "drive"),
          ("rode", "ride"), ("climbed", "climb"), ("wandered", "wander"), ("went", "go"),
          ("returned", "return"), ("crept", "creep")]

SPEECH_VERBS = ["said", "said", "said", "asked", "replied", "whispered", "called", "answered",
                "muttered", "added", "admitted", "insisted"]

TIME_PHRASES = [
    "in the morning", "that evening", "at dawn", "after supper", "on Sunday", "before the storm",
    "by noon", "in the spring", "late at night", "the next day", "an hour later", "at midday",
    "before breakfast", "after the funeral", "during the harvest", "on market day",
    "the following week", "just before dark", "in the winter", "when the bells rang",
]

CONJ_SUB = ["because", "when", "although", "while", "after", "before", "until", "since", "as soon as", "even though"]

NUMBER_WORDS = ["two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "twelve",
                "twenty", "a dozen", "a hundred"]

ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "last"]

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]

CHAPTER_TITLES = [
    "The Mill", "A Letter from the Coast", "Market Day", "The Broken Bridge", "Winter",
    "The Stranger at the Inn", "What the River Carried", "The Lighthouse", "Harvest",
    "A Key and a Promise", "The Storm", "Old Debts", "The Orchard", "Return",
]

FEELINGS = ["tired", "hungry", "cold", "afraid", "certain", "worried", "lost", "late", "ready", "sorry", "glad"]


class Story:
    """Keeps a little state (who was mentioned last) so pronouns and names hang together."""

    def __init__(self, rng):
        self.r = rng
        self.last = None  # (name, pronoun) of the last character mentioned
        self.cast = rng.sample(CHARACTERS, 8)

    # --- helpers ----------------------------------------------------------------------------

    def pick(self, seq):
        return self.r.choice(seq)

    def chance(self, p):
        return self.r.random() < p

    @staticmethod
    def article(word):
        if word in AN_WORDS:
            return "an"
        return "a" if word.startswith(("use", "uni", "one")) or word[0] not in "aeiou" else "an"

    @staticmethod
    def cap(text):
        return text[0].upper() + text[1:]

    def character(self):
        # Mostly the current cast, sometimes someone new joins it.
        if self.chance(0.08):
            newcomer = self.pick(CHARACTERS)
            if newcomer not in self.cast:
                self.cast[self.r.randrange(len(self.cast))] = newcomer
        who = self.pick(self.cast)
        self.last = who
        return who

    def number(self):
        roll = self.r.random()
        if roll < 0.55:
            return self.pick(NUMBER_WORDS)
        if roll < 0.85:
            return str(self.r.randint(2, 60))
        return str(self.r.randint(100, 950))

    # --- noun phrases -----------------------------------------------------------------------

    def thing_np(self, plural_ok=True):
        sing, plur = self.pick(THINGS)
        roll = self.r.random()
        if plural_ok and roll < 0.15:
            count = self.number()
            return f"{count} {plur}" if count not in ("a dozen", "a hundred") else f"{count} {plur}"
        if plural_ok and roll < 0.25:
            return f"the {plur}"
        adj = self.pick(ADJECTIVES) + " " if self.chance(0.45) else ""
        if self.chance(0.15):
            who, _ = self.pick([c for c in self.cast if c != self.last])
            return f"{who}'s {adj}{sing}"
        if self.chance(0.6):
            return f"the {adj}{sing}"
        first = (adj or sing)
        return f"{self.article(first)} {adj}{sing}"

    def person_np(self, allow_name=True):
        """Returns (text, is_plural, is_name)."""
        roll = self.r.random()
        if allow_name and roll < 0.5:
            name, _ = self.character()
            return name, False, True
        sing, plur = self.pick(PEOPLE)
        if roll < 0.62:
            return f"the {plur}", True, False
        adj = self.pick(PERSON_ADJECTIVES) + " " if self.chance(0.4) else ""
        if self.chance(0.7):
            return f"the {adj}{sing}", False, False
        first = adj or sing
        return f"{self.article(first)} {adj}{sing}", False, False

    def subject(self):
        """Subject for a past-tense clause; uses a pronoun for the last character now and then."""
        if self.last is not None and self.chance(0.3):
            return self.last[1], False
        text, plural, _ = self.person_np()
        return text, plural

    def place_pp(self):
        prep = self.pick(PLACE_PREPS)
        place = self.pick(PLACES)
        return f"{prep} {place}"

    def time_phrase(self):
        roll = self.r.random()
        if roll < 0.75:
            return self.pick(TIME_PHRASES)
        if roll < 0.85:
            return f"at {self.r.randint(1, 12)} o'clock"
        if roll < 0.93:
            return f"on the {self.pick(ORDINALS)} day"
        return f"in {self.pick(MONTHS)} {self.r.randint(1850, 1930)}"

    # --- clauses ----------------------------------------------------------------------------

    def predicate_past(self):
        roll = self.r.random()
        adv_before = self.pick(PRE_ADVERBS) + " " if self.chance(0.1) else ""
        if roll < 0.45:
            _, past, _, _ = self.pick(TRANSITIVE)
            text = f"{adv_before}{past} {self.thing_np()}"
            if self.chance(0.3):
                text += " " + self.place_pp()
        elif roll < 0.62:
            _, past, _, _ = self.pick(SOCIAL)
            obj, _, _ = self.person_np()
            text = f"{adv_before}{past} {obj}"
        elif roll < 0.8:
            _, past, _ = self.pick(INTRANSITIVE)
            text = f"{adv_before}{past}"
            if self.chance(0.5):
                text += " " + self.place_pp()
        elif roll < 0.92:
            past, _ = self.pick(MOTION)
            text = f"{adv_before}{past} {self.pick(['to', 'towards', 'across', 'along', 'through', 'past'])} {self.pick(PLACES)}"
        else:
            text = f"was {self.pick(['too', 'far too', 'much too'])} {self.pick(TOO_ADJECTIVES)} to {self.pick(INTRANSITIVE)[0]}"
        if self.chance(0.3):
            text += " " + self.pick(ADVERBS)
        return text

    def clause_past(self):
        subj, _ = self.subject()
        return f"{subj} {self.predicate_past()}"

    def relative_clause(self):
        roll = self.r.random()
        if roll < 0.5:
            return f"who {self.predicate_past()}"
        if roll < 0.8:
            subj, _ = self.subject()
            _, past, _, _ = self.pick(SOCIAL)
            return f"whom {subj} had {self.participle(past)}"
        return f"whose {self.pick(THINGS)[0]} was {self.pick(ADJECTIVES)}"

    def participle(self, past):
        for verb in SOCIAL + TRANSITIVE:
            if verb[1] == past:
                return verb[3]
        return past

    # --- sentences --------------------------------------------------------------------------

    def narrative_sentence(self):
        roll = self.r.random()
        if roll < 0.22:
            s = self.clause_past()
            if self.chance(0.3):
                s = f"{self.time_phrase()}, {s}"
            return self.cap(s) + "."
        if roll < 0.36:
            return self.cap(f"{self.clause_past()} {self.pick(CONJ_SUB)} {self.clause_past()}") + "."
        if roll < 0.46:
            return self.cap(f"{self.pick(CONJ_SUB)} {self.clause_past()}, {self.clause_past()}") + "."
        if roll < 0.55:
            conj = self.pick(["and", "but", "so", "and then", "yet"])
            return self.cap(f"{self.clause_past()}, {conj} {self.clause_past()}") + "."
        if roll < 0.63:
            text, plural, is_name = self.person_np(allow_name=False)
            verb = "were" if plural else "was"
            return self.cap(f"{text} {self.relative_clause()} {verb} {self.pick(['not', 'still', 'no longer', 'already', 'suddenly'])} {self.pick(PREDICATIVE)}") + "."
        if roll < 0.71:
            return self.description()
        if roll < 0.77:
            return self.cap(self.pick(WEATHER)) + ("." if self.chance(0.6) else f", and {self.clause_past()}.")
        if roll < 0.84:
            return self.number_sentence()
        if roll < 0.92:
            subj, _ = self.subject()
            _, past, _, _ = self.pick(TRANSITIVE)
            agent, _ = self.subject()
            _, _, _, gap = self.pick(TRANSITIVE)
            return self.cap(f"{subj} {past} {self.thing_np(False)} that {agent} had {gap}") + "."
        subj, _ = self.subject()
        thought = self.pick(["thought", "knew", "suspected", "remembered", "hoped", "decided", "noticed"])
        return self.cap(f"{subj} {thought} that {self.clause_past()}") + "."

    def description(self):
        roll = self.r.random()
        sing, plur = self.pick(THINGS)
        a1, a2 = self.r.sample(ADJECTIVES, 2)
        if roll < 0.35:
            return f"The {sing} was {a1} and {a2}."
        if roll < 0.6:
            return f"There {self.pick(['were', 'had been'])} {self.number()} {a1} {plur} {self.place_pp()}."
        if roll < 0.8:
            return f"It was {self.article(a1)} {a1}, {a2} {self.pick(['day', 'night', 'morning', 'evening', 'week', 'house', 'town'])}."
        place = self.pick(PLACES)
        return f"{self.cap(place)} {self.pick(['was', 'seemed', 'looked'])} {self.pick(['almost', 'very', 'strangely', 'still', 'unusually'])} {a1}."

    def number_sentence(self):
        roll = self.r.random()
        who, _ = self.character()
        if roll < 0.25:
            return f"{who} counted {self.r.randint(3, 99)} {self.pick(THINGS)[1]} and wrote the number in a small book."
        if roll < 0.45:
            return f"The {self.pick(['bridge', 'road', 'wall', 'field', 'boat', 'tower'])} was {self.r.randint(4, 300)} {self.pick(['metres', 'feet', 'paces', 'yards'])} {self.pick(['long', 'wide', 'high'])}."
        if roll < 0.65:
            return f"It had {self.pick(['rained', 'snowed', 'been dry', 'been quiet'])} for {self.pick(NUMBER_WORDS[:9])} days."
        if roll < 0.8:
            price = self.r.randint(2, 40)
            return f"{who} paid {price} {self.pick(['shillings', 'pennies', 'crowns'])} for {self.thing_np(False)}."
        year = self.r.randint(1850, 1930)
        return f"In {year} the {self.pick(['mill', 'school', 'church', 'bridge', 'inn', 'lighthouse'])} had {self.pick(['burned down', 'been rebuilt', 'opened', 'closed', 'flooded'])}."

    # --- dialogue ---------------------------------------------------------------------------

    def utterance(self):
        roll = self.r.random()
        sing, plur = self.pick(THINGS)
        base, _, third, part = self.pick(TRANSITIVE)
        if roll < 0.1:
            return f"I {base} the {sing} {self.pick(['every day', 'when I can', 'for my mother', 'before dark'])}", "."
        if roll < 0.2:
            return f"We must {base} the {plur} before {self.pick(['the rain comes', 'nightfall', 'Sunday', 'the boat leaves', 'anyone notices'])}", "."
        if roll < 0.28:
            return f"You should not {base} that {sing}", self.pick([".", "!"])
        if roll < 0.36:
            return f"The {sing} is {self.pick(['too', 'very', 'not', 'still', 'rather'])} {self.pick(ADJECTIVES)}", "."
        if roll < 0.44:
            return f"I think the {sing} is {self.pick(PLACE_PREPS)} {self.pick(PLACES)}", "."
        if roll < 0.5:
            return f"Bring me the {self.pick(ADJECTIVES)} {sing}", self.pick([".", "!"])
        if roll < 0.56:
            return f"Do you remember the {self.pick(ADJECTIVES)} {sing}", "?"
        if roll < 0.62:
            return f"Where is the {sing}", "?"
        if roll < 0.68:
            name, _ = self.pick(self.cast)
            since = self.pick(["Tuesday", "the harvest", "last winter", "the storm", "breakfast", "the funeral", "yesterday"])
            return f"Has anyone seen {name} since {since}", "?"
        if roll < 0.74:
            return f"Why did you {base} my {sing}", "?"
        if roll < 0.8:
            return f"I am {self.pick(['not', 'so', 'a little', 'very'])} {self.pick(FEELINGS)}", "."
        if roll < 0.85:
            name, _ = self.pick(self.cast)
            return f"{name} {third} the {plur} {self.pick(['every morning', 'on Fridays', 'when nobody is looking', 'for the school'])}", "."
        if roll < 0.9:
            return f"It has been {self.pick(['broken', 'taken', 'hidden', 'lost', 'sold'])} {self.pick(['again', 'twice', 'since Tuesday', 'for years'])}", "."
        if roll < 0.95:
            return f"How many {plur} do we need", "?"
        return self.pick(["Thank you", "Yes, of course", "No, not yet", "Perhaps", "Listen",
                          "Wait here", "Come inside", "Not now", "Of course not", "Be careful"]), self.pick([".", "!"])

    def dialogue_line(self):
        speech, end = self.utterance()
        name, pronoun = self.character()
        speaker = name if self.chance(0.75) else pronoun
        verb = "asked" if end == "?" and self.chance(0.6) else self.pick(SPEECH_VERBS)
        if end == "?" and verb in ("said", "added", "admitted", "insisted"):
            verb = "asked"
        if end != "?" and verb == "asked":
            verb = "said"
        adverb = " " + self.pick(ADVERBS) if self.chance(0.3) else ""
        roll = self.r.random()
        if roll < 0.55:
            mark = "," if end == "." else end
            return f'"{speech}{mark}" {speaker} {verb}{adverb}.'
        if roll < 0.8:
            return f'{self.cap(speaker)} {verb}{adverb}, "{speech}{end}"'
        follow, end2 = self.utterance()
        mark = "," if end == "." else end
        lead = follow[0].lower() + follow[1:] if not follow.startswith("I ") and follow.split()[0] not in [c[0] for c in CHARACTERS] else follow
        if end == ".":
            return f'"{speech}{mark}" {speaker} {verb}{adverb}, "{lead}{end2}"'
        return f'"{speech}{mark}" {speaker} {verb}{adverb}. "{follow}{end2}"'

    # --- paragraphs -------------------------------------------------------------------------

    def paragraph(self):
        roll = self.r.random()
        if roll < 0.28:
            lines = [self.dialogue_line()]
            if self.chance(0.4):
                lines.append(self.narrative_sentence())
            return " ".join(lines)
        count = self.r.randint(2, 7)
        return " ".join(self.narrative_sentence() for _ in range(count))


def generate(seed, target_bytes):
    rng = random.Random(seed)
    story = Story(rng)
    paragraphs = []
    size = 0
    chapter = 0
    until_chapter = 0
    while size < target_bytes:
        if until_chapter == 0:
            chapter += 1
            title = CHAPTER_TITLES[(chapter - 1) % len(CHAPTER_TITLES)]
            paragraphs.append(f"Chapter {chapter}: {title}")
            size += len(paragraphs[-1]) + 1
            until_chapter = rng.randint(25, 45)
            story.last = None
        text = story.paragraph()
        paragraphs.append(text)
        size += len(text) + 1
        until_chapter -= 1
    out = "\n".join(paragraphs) + "\n"
    out.encode("ascii")  # the corpus is plain ASCII by design
    return out


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(root, "resources", "corpus.txt"))
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--bytes", type=int, default=TARGET_BYTES, help="approximate output size")
    args = parser.parse_args()
    text = generate(args.seed, args.bytes)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="ascii", newline="\n") as f:
        f.write(text)
    print(f"wrote {len(text)} bytes to {args.out}")


if __name__ == "__main__":
    main()
