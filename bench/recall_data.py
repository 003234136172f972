"""Long two-person conversations with planted facts, for bench/recall.py (deterministic).

Each conversation is a series of dated sessions between two friends (speaker A is the chatmem
"user", speaker B the "assistant", as an application logging a human conversation would store
them). Sessions are small talk drawn from topic templates — with deliberately shared vocabulary
(sisters, dogs, trips, work, cities) so keyword search has distractors — into which facts are
planted: stated once, sometimes changed later ("we moved to Lyon" … "we ended up in Porto
instead"), and asked about at the end with a paraphrased question (often with no word in common
with the statement: "cello lessons" ↔ "which instrument am I learning?"). Every question lists
the turns that hold its answer: the evidence a prompt needs to contain.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

NAMES = [
    "Lena",
    "Marco",
    "Priya",
    "Tomás",
    "Aiko",
    "Noor",
    "Jonas",
    "Chloé",
    "Ravi",
    "Ingrid",
    "Kofi",
    "Mei",
    "Dario",
    "Sanne",
    "Omar",
    "Yuki",
    "Elif",
    "Bruno",
    "Hana",
    "Felix",
]
CITIES = [
    "Porto",
    "Lyon",
    "Rotterdam",
    "Kraków",
    "Valencia",
    "Leipzig",
    "Bergen",
    "Turin",
    "Ghent",
    "Graz",
    "Malmö",
    "Bilbao",
    "Tallinn",
    "Bologna",
    "Aarhus",
]
COUNTRIES = ["Japan", "Peru", "Iceland", "Vietnam", "Morocco", "Greece", "Canada", "Norway"]
JOBS = [
    "pediatric nurse",
    "data analyst",
    "civil engineer",
    "pastry chef",
    "paramedic",
    "landscape architect",
    "translator",
    "sound engineer",
    "veterinarian",
    "librarian",
]
COMPANIES = [
    "Brightwave",
    "Nordlicht",
    "Copperleaf",
    "Tidewater",
    "Helix Labs",
    "Oakmont",
    "Bluefin Logistics",
    "Quarry & Co",
]
BREEDS = ["beagle", "border collie", "dachshund", "greyhound", "corgi", "labrador", "shiba inu"]
PETNAMES = ["Biscuit", "Pepper", "Mochi", "Waffles", "Juniper", "Noodle", "Ziggy", "Olive"]
INSTRUMENTS = ["cello", "trumpet", "ukulele", "clarinet", "banjo", "harp", "saxophone"]
ALLERGENS = ["shellfish", "cashews", "penicillin", "birch pollen", "sesame", "kiwi"]
COLORS = ["teal", "burgundy", "mustard yellow", "forest green", "silver", "navy blue"]
CARS = ["Golf", "Fiesta", "Corolla", "Civic", "Clio", "Octavia"]
EVENTS = ["half marathon", "thesis defense", "driving test", "piano recital", "job interview"]
BOOKS = [
    "The Left Hand of Darkness",
    "Piranesi",
    "A Gentleman in Moscow",
    "The Remains of the Day",
    "Station Eleven",
    "Circe",
    "The Overstory",
]
SPORTS = ["bouldering", "swimming", "rowing", "cycling", "table tennis", "fencing"]
LANGUAGES = ["Portuguese", "Korean", "Turkish", "Finnish", "Swahili", "Polish"]
DISHES = ["lasagna", "goulash", "apple pie", "paella", "dumplings"]
SPICES = ["nutmeg", "smoked paprika", "cardamom", "star anise", "fennel seed"]
PLANTS = ["orchid", "jasmine", "hibiscus", "lemon tree", "peace lily"]
GAMES = ["Hollow Knight", "Stardew Valley", "Elden Ring", "Hades", "Outer Wilds"]
FEARS = ["deep water", "heights", "thunderstorms", "spiders", "tunnels"]
ITEMS = ["fountain pens", "vinyl records", "postcards", "film cameras", "board games"]
FLOORS = ["fourth", "sixth", "third", "seventh"]
COFFEE = ["flat white", "cortado", "iced americano", "chai latte"]
TIMES = ["5:30", "6 o'clock", "quarter past five", "6:15"]
PLACES = ["animal shelter", "food bank", "community garden", "public library"]
BODY = ["ankle", "wrist", "shoulder", "knee"]
MONTHS = ["January", "March", "May", "July", "September", "November"]
SCHOOLS = ["Riverside Primary", "Maple Grove Academy", "St. Anne's", "Hillcrest Elementary"]

# Small talk, by topic: (A line, B reply). {n} a name, {c} a city, {co} a company, {x} a misc word.
TOPICS = {
    "weather": [
        (
            "It has been raining all week here, I'm so tired of grey skies.",
            "Same here, the forecast says it might clear up by the weekend though.",
        ),
        (
            "Finally some sun today, I had lunch outside for once.",
            "Lucky you, it was freezing and windy when I went out this morning.",
        ),
        ("The storm last night knocked a branch onto our street.", "Yikes, was anyone hurt?"),
    ],
    "work": [
        (
            "Work has been hectic, the {co} launch keeps slipping.",
            "Deadlines like that are the worst, hang in there.",
        ),
        (
            "We had a three hour meeting today that could have been an email.",
            "Ha, I know that feeling all too well.",
        ),
        (
            "My team is hiring again, so I'm doing interviews all week.",
            "Interviewing is exhausting, I hope you find someone good.",
        ),
        ("I stayed late to fix a bug that only happens on Mondays.", "That sounds maddening."),
    ],
    "family": [
        ("My sister called again to talk about the holidays.", "How is she doing these days?"),
        (
            "My parents want us all to visit {c} next summer.",
            "That could be a nice family trip actually.",
        ),
        ("{n} came over for dinner and we talked for hours.", "Sounds like a lovely evening."),
        ("My brother keeps sending me memes at 2am.", "Brothers are like that, mine too."),
    ],
    "pets": [
        ("The neighbour's dog barked all night again.", "Ugh, did you get any sleep?"),
        ("I saw the cutest puppy at the park this morning.", "What kind was it?"),
        ("A cat has started visiting our balcony every evening.", "Maybe it wants to adopt you."),
    ],
    "food": [
        (
            "I tried a new ramen place near the station, it was amazing.",
            "Ooh, send me the name, I love ramen.",
        ),
        ("I made soup with whatever was left in the fridge.", "Those are often the best meals."),
        (
            "We ordered pizza again, I really need to start cooking more.",
            "Pizza night is sacred, no guilt.",
        ),
        (
            "I baked bread for the first time and it came out like a brick.",
            "Everyone's first loaf is a brick, keep going.",
        ),
    ],
    "travel": [
        (
            "I keep looking at flights to {c} but they're so expensive.",
            "Prices are crazy this year, maybe wait for a sale.",
        ),
        (
            "My trip got delayed by six hours at the airport.",
            "That's awful, did they give vouchers?",
        ),
        ("I'd love to take a train trip across Europe someday.", "That's on my list too."),
    ],
    "weekend": [
        ("Any plans for the weekend?", "Not really, maybe a hike if the weather holds."),
        ("I spent the whole Saturday cleaning the flat.", "Productive, even if boring."),
        ("We went to a flea market on Sunday and bought a lamp.", "What does it look like?"),
        ("I finally watched that documentary everyone talks about.", "Was it as good as they say?"),
    ],
    "health": [
        (
            "I've been trying to drink more water, it's harder than it sounds.",
            "Set reminders on your phone, that helped me.",
        ),
        ("I caught a cold from someone at work.", "Get some rest and lots of tea."),
        ("I started stretching every morning, my back feels better.", "Nice, consistency is key."),
    ],
    "media": [
        ("Have you seen the new season of that detective show?", "Not yet, no spoilers please!"),
        (
            "I'm reading a thriller that kept me up until 1am.",
            "Those are dangerous on work nights.",
        ),
        ("There's a concert in {c} next month I'd love to go to.", "Who's playing?"),
        ("I've been listening to a podcast about ancient Rome.", "You and every other person."),
    ],
    "tech": [
        ("My laptop fan sounds like a jet engine lately.", "Maybe it needs cleaning."),
        ("The wifi at home keeps dropping every evening.", "Have you tried restarting the router?"),
        ("I lost my phone charger again.", "You should keep a spare in your bag."),
    ],
}

# Sentences that make small talk as long as real chat turns (LoCoMo averages ~25 words a turn).
ELABORATIONS = [
    "Honestly it has been one of those weeks where everything happens at once.",
    "I keep telling myself I'll sort it out next month, but we'll see.",
    "My sister thinks I'm overreacting, but she always says that.",
    "The dog next door started barking right as I sat down, of course.",
    "I was going to call you about it yesterday but work ran late again.",
    "It reminded me of that trip we took ages ago, do you remember?",
    "Anyway, it's not a big deal, just one more thing on the list.",
    "I told my brother and he just laughed, which didn't help at all.",
    "We'll probably talk about it at dinner on Sunday with the family.",
    "The weather didn't help either, it was grey and cold the whole time.",
    "I read somewhere that most people feel the same way about it.",
    "My manager asked about it too, so apparently everyone noticed.",
    "I might write it down so I don't forget the details this time.",
    "It's funny how the small things end up taking the most time.",
    "I should probably get more sleep before I decide anything.",
    "That's what my friends in the city keep telling me anyway.",
    "Let's see how it goes, I'm trying not to plan too far ahead.",
    "Part of me wants to just take a long weekend and disappear.",
]

GREETINGS = [
    ("Hey! How have you been?", "Good, busy as always. You?"),
    ("Hi there, long time no talk!", "I know, things have been crazy."),
    ("Morning! Got a minute to chat?", "Sure, what's up?"),
]
BYES = [
    ("Anyway, I should get going.", "Talk soon, take care!"),
    ("I need to run, dinner is ready.", "Enjoy, catch you later!"),
]


@dataclass
class Turn:
    role: str  # user (speaker A) | assistant (speaker B)
    text: str
    created_at: int  # ms


@dataclass
class Question:
    text: str
    evidence: list[int]  # turn indices
    kind: str  # plain | paraphrase | update | temporal


@dataclass
class Conversation:
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


@dataclass
class Fact:
    """Lines to plant (role, text) and how to ask; ``update`` lines come in a later session."""

    lines: list[tuple[str, str]]
    question: str
    kind: str
    update: list[tuple[str, str]] | None = None
    evidence_in_update: bool = False


def _facts(r: random.Random) -> list[Fact]:
    n = r.sample(NAMES, 8)
    c = r.sample(CITIES, 6)
    j = r.sample(JOBS, 3)
    co = r.sample(COMPANIES, 2)
    return [
        Fact(
            [
                (
                    "user",
                    f"Big news, my sister {n[0]} just got hired as a {j[0]} at a hospital in "
                    f"{c[0]}!",
                ),
                ("assistant", f"That's wonderful, {n[0]} must be thrilled."),
            ],
            f"What is {n[0]}'s new job?",
            "plain",
        ),
        Fact(
            [
                (
                    "user",
                    f"We adopted a {r.choice(BREEDS)} puppy last weekend, we're calling him "
                    f"{(pet := r.choice(PETNAMES))}.",
                ),
                ("assistant", "Oh my god, send pictures immediately!"),
            ],
            f"What kind of dog is {pet}?",
            "plain",
        ),
        Fact(
            [
                (
                    "user",
                    f"Turns out I'm allergic to {r.choice(ALLERGENS)}, the doctor confirmed it "
                    "yesterday.",
                ),
                ("assistant", "Good that you know now, that explains the rashes."),
            ],
            "What did the tests show I react badly to?",
            "paraphrase",
        ),
        Fact(
            [
                ("user", f"I signed up for {r.choice(INSTRUMENTS)} lessons on Thursday evenings."),
                ("assistant", "That's so cool, you'll have to play something for me."),
            ],
            "Which musical instrument am I learning to play?",
            "paraphrase",
        ),
        Fact(
            [
                ("user", f"We're planning to move to {c[1]} in the spring."),
                ("assistant", f"{c[1]}! That's a big change."),
            ],
            "Which city did we end up moving to?",
            "update",
            update=[
                ("user", f"Change of plans: we ended up moving to {c[2]} instead of {c[1]}."),
                ("assistant", f"Wow, {c[2]} then! How are you settling in?"),
            ],
            evidence_in_update=True,
        ),
        Fact(
            [
                ("user", f"I finally bought a car, a used {r.choice(COLORS)} {r.choice(CARS)}."),
                ("assistant", "Congrats! No more waiting for the bus."),
            ],
            "What color is the car I bought?",
            "plain",
        ),
        Fact(
            [
                ("user", f"My {(ev := r.choice(EVENTS))} is next Friday, I'm so nervous."),
                ("assistant", "You'll do great, you've prepared so much."),
            ],
            f"On what date was my {ev}?",
            "temporal",
        ),
        Fact(
            [
                ("user", f"I just finished {r.choice(BOOKS)} and it's my favourite novel now."),
                ("assistant", "I've heard great things about it."),
            ],
            "Which book did I call my favorite?",
            "paraphrase",
        ),
        Fact(
            [
                ("user", f"{n[1]} asked me to be the maid of honour at her wedding in {c[3]}."),
                ("assistant", f"What an honour! When is {n[1]}'s wedding?"),
            ],
            "Whose wedding will I be part of, and where?",
            "plain",
        ),
        Fact(
            [
                ("user", f"I work as a {j[1]} at {co[0]}, have I told you?"),
                ("assistant", f"I don't think so! How long have you been at {co[0]}?"),
            ],
            "Where do I work these days?",
            "update",
            update=[
                ("user", f"I handed in my notice at {co[0]}; I'm now a {j[2]} at {co[1]}."),
                ("assistant", f"A fresh start at {co[1]}, good for you!"),
            ],
            evidence_in_update=True,
        ),
        Fact(
            [
                ("user", f"I've been vegetarian since {r.choice(MONTHS)}, it's going well."),
                ("assistant", "Impressive, do you miss anything?"),
            ],
            "Since when have I stopped eating meat?",
            "paraphrase",
        ),
        Fact(
            [
                ("user", f"My son {n[2]} starts at {r.choice(SCHOOLS)} in September."),
                ("assistant", "Time flies, he was a baby like yesterday."),
            ],
            f"Which school is {n[2]} going to attend?",
            "plain",
        ),
        Fact(
            [
                (
                    "user",
                    f"I sprained my {(bp := r.choice(BODY))} playing {r.choice(SPORTS)} on "
                    "Saturday.",
                ),
                ("assistant", "Ouch, ice it and take it easy."),
            ],
            f"How did I injure my {bp}?",
            "plain",
        ),
        Fact(
            [
                ("user", f"We booked two weeks in {r.choice(COUNTRIES)} for {r.choice(MONTHS)}."),
                ("assistant", "Jealous! That will be an adventure."),
            ],
            "Where are we going on vacation, and when?",
            "paraphrase",
        ),
        Fact(
            [
                ("assistant", f"I started volunteering at the {r.choice(PLACES)} on weekends."),
                ("user", "That's really generous of you."),
            ],
            "Where did you say you volunteer?",
            "plain",
        ),
        Fact(
            [
                (
                    "user",
                    f"The secret in my grandma's {(d := r.choice(DISHES))} is a pinch of "
                    f"{r.choice(SPICES)}.",
                ),
                ("assistant", "Your secret is safe with me."),
            ],
            f"What is the hidden ingredient in grandma's {d}?",
            "paraphrase",
        ),
        Fact(
            [
                ("user", f"I'm training for a 10k race in {c[4]}."),
                ("assistant", "Running in a new city sounds fun."),
            ],
            "What sport do I do now?",
            "update",
            update=[
                (
                    "user",
                    f"My knee gave up on running, so I've switched to "
                    f"{(sp := r.choice(SPORTS))} instead.",
                ),
                ("assistant", f"{sp.capitalize()} is much kinder on the joints."),
            ],
            evidence_in_update=True,
        ),
        Fact(
            [
                (
                    "user",
                    f"{n[3]}'s birthday is on the 14th of {r.choice(MONTHS)}, remind me to buy "
                    "a gift.",
                ),
                ("assistant", f"Noted! Any idea what {n[3]} would like?"),
            ],
            f"When is {n[3]}'s birthday?",
            "plain",
        ),
        Fact(
            [
                ("user", f"The {r.choice(PLANTS)} on my balcony finally bloomed!"),
                ("assistant", "After all that care, finally!"),
            ],
            "Which plant flowered on my balcony?",
            "paraphrase",
        ),
        Fact(
            [
                ("user", f"I've sunk eighty hours into {r.choice(GAMES)} this month, send help."),
                ("assistant", "Ha, at least it's a good one."),
            ],
            "What video game have I been playing a lot?",
            "paraphrase",
        ),
        Fact(
            [
                ("user", f"I'm learning {r.choice(LANGUAGES)} with an app every morning."),
                ("assistant", "How far along are you?"),
            ],
            "Which language am I studying?",
            "paraphrase",
        ),
        Fact(
            [
                ("user", f"My usual order at the café is a {r.choice(COFFEE)} with oat milk."),
                ("assistant", "Classic choice."),
            ],
            "What do I normally get at the coffee shop?",
            "paraphrase",
        ),
        Fact(
            [
                (
                    "user",
                    f"Our new flat is on the {r.choice(FLOORS)} floor and there's no elevator.",
                ),
                ("assistant", "Free workout every day then!"),
            ],
            "Which floor is our apartment on?",
            "paraphrase",
        ),
        Fact(
            [
                ("user", f"I'm terrified of {r.choice(FEARS)}, always have been."),
                ("assistant", "That's more common than you'd think."),
            ],
            "What am I afraid of?",
            "paraphrase",
        ),
        Fact(
            [
                ("user", f"My manager {n[4]} is retiring at the end of the year."),
                ("assistant", f"Do you know who will replace {n[4]}?"),
            ],
            "Who on my team is retiring?",
            "plain",
        ),
        Fact(
            [
                ("user", f"I collect vintage {r.choice(ITEMS)}, my shelf is overflowing."),
                ("assistant", "You need a bigger shelf!"),
            ],
            "What kind of things do I collect?",
            "paraphrase",
        ),
        Fact(
            [
                ("user", f"I've been waking up at {r.choice(TIMES)} to go to the gym before work."),
                ("assistant", "That's dedication."),
            ],
            "What time do I get up for my workouts?",
            "paraphrase",
        ),
        Fact(
            [
                ("assistant", f"My cousin {n[5]} is opening a bakery in {c[5]}."),
                ("user", f"That's amazing, I'll visit when I'm in {c[5]}."),
            ],
            f"What is {n[5]} opening?",
            "plain",
        ),
        Fact(
            [
                (
                    "user",
                    f"Our cat is named {(cat := r.choice(PETNAMES))} after my favourite cartoon.",
                ),
                ("assistant", f"{cat} is a great name for a cat."),
            ],
            "What is our cat called now?",
            "update",
            update=[
                (
                    "user",
                    f"The kids renamed the cat {(cat2 := r.choice(NAMES))}, "
                    f"{cat} was too boring for them.",
                ),
                ("assistant", f"{cat2} it is then!"),
            ],
            evidence_in_update=True,
        ),
        Fact(
            [
                ("user", f"{n[6]} and I are starting a podcast about urban gardening."),
                ("assistant", "What a fun project!"),
            ],
            f"What is the podcast with {n[6]} about?",
            "plain",
        ),
    ]


def _fill(r: random.Random, line: str, names: list[str]) -> str:
    text = line.format(n=r.choice(names), c=r.choice(CITIES), co=r.choice(COMPANIES), x="")
    return " ".join([text, *r.sample(ELABORATIONS, r.choice((0, 1, 1, 2)))])


def generate(seed: int, turns: int = 600, n_facts: int = 30) -> Conversation:
    """One conversation of at least ``turns`` turns with ``n_facts`` planted facts."""
    r = random.Random(seed)
    facts = _facts(r)[:n_facts]
    r.shuffle(facts)
    names = r.sample(NAMES, 6)
    conv = Conversation()
    day = dt.datetime(2025, 1, 6, 18, 0, tzinfo=dt.UTC)
    sessions = max(8, turns // 24)
    # facts and updates assigned to sessions; an update comes at least 3 sessions later
    plan: dict[int, list[tuple[Fact, bool]]] = {}
    for fact in facts:
        s = r.randrange(0, sessions - 4 if fact.update else sessions - 1)
        plan.setdefault(s, []).append((fact, False))
        if fact.update:
            plan.setdefault(r.randrange(s + 3, sessions), []).append((fact, True))
    where: dict[int, tuple[list[int], list[int]]] = {}
    per_session = turns // sessions + 1
    for s in range(sessions):
        t = day.timestamp() * 1000
        lines: list[tuple[str, str, tuple[int, bool] | None]] = []
        lines.extend(("", role_text, None) for role_text in r.choice(GREETINGS))
        while len(lines) < per_session - 2:
            a, b = r.choice(TOPICS[r.choice(list(TOPICS))])
            lines.append(("", _fill(r, a, names), None))
            lines.append(("", _fill(r, b, names), None))
        for fact, is_update in plan.get(s, []):
            at = r.randrange(2, len(lines) + 1)
            at -= at % 2  # keep A/B alternation: insert a whole exchange
            chunk = fact.update if is_update else fact.lines
            for k, (role, text) in enumerate(chunk):
                lines.insert(at + k, (role, text, (id(fact), is_update)))
        lines.extend(("", role_text, None) for role_text in r.choice(BYES))
        for k, (given, text, tag) in enumerate(lines):
            idx = len(conv.turns)
            role = given or ("user" if k % 2 == 0 else "assistant")
            conv.turns.append(Turn(role, text, int(t + k * 45_000)))
            if tag is not None:
                first, upd = where.setdefault(tag[0], ([], []))
                (upd if tag[1] else first).append(idx)
        day += dt.timedelta(days=r.randint(2, 9), hours=r.randint(-3, 3))
    for fact in facts:
        first, upd = where.get(id(fact), ([], []))
        # the statement itself is evidence (its first line; with the reply when that carries it)
        ev = upd[:1] if fact.evidence_in_update and upd else first[:1]
        if fact.kind == "temporal":
            ev = first[:1]
        conv.questions.append(Question(fact.question, ev, fact.kind))
    return conv
