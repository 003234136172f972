"""The offline extractor's pattern tables: English and Chinese first-person statements (pure).

Why it exists: the demo provider (and any deployment without a model budget for extraction) still
needs long-term memory. Each pattern recognises one kind of first-person statement ("I live in …",
"我住在…"), names its slot (so a later "I moved to …" supersedes it deterministically), its type and a
one-line memory text. Every pattern carries an example and the value it must yield; the test suite
runs every one of them.

Only first-person forms are matched ("my sister lives in Rome" is not a fact about the user), and
questions are skipped by the extractor, not here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DAY = 86_400_000

# English values stop at punctuation or at a conjunction/adverbial that starts another clause.
_V = r"(?P<v>[^,.;!?\n]+?)"
_END = (r"(?=\s+(?:and|but|so|because|since|although|though|while|with|for|now|right now|"
        r"these days|at the moment|which|who|where|anymore)\b|\s*[,.;!?\n]|\s*$)")
V = _V + _END
# Chinese values stop at punctuation, a conjunction or a sentence-final particle.
_ZV = r"(?P<v>[^\s，。！？,.!?；;、：:]{1,30}?)"
_ZEND = r"(?=[\s，。！？,.!?；;、]|和|而且|但是|所以|因为|吧|啦|呀|了|哦|就好|就行|$)"
ZV = _ZV + _ZEND


@dataclass(frozen=True)
class Pattern:
    name: str
    lang: str  # en | zh
    regex: str
    slot: str  # '' = no slot; may use {k} (the 'k' group, normalised)
    memory_type: str  # location | preference | identity | schedule | habit | goal | constraint
    template: str  # uses {v} (the value) and optionally {k}, {t}
    example: str
    expect: str  # the value the example must yield
    importance: int = 3
    confidence: float = 0.75
    ttl_ms: int | None = None  # time-bound (QUERY_DEPENDENT) when set or when a 't' group matches
    agent_type: str = ""  # seed-000 type override for agent conversations
    stop: tuple[str, ...] = ()  # values that mean the pattern misfired

    def compiled(self) -> re.Pattern:
        return _compile(self.regex)


_CACHE: dict[str, re.Pattern] = {}


def _compile(rx: str) -> re.Pattern:
    p = _CACHE.get(rx)
    if p is None:
        p = _CACHE[rx] = re.compile(rx, re.I)
    return p


_RELATIONS = "wife|husband|partner|girlfriend|boyfriend|son|daughter|brother|sister|mother|mom|father|dad|dog|cat"
_JOBS = ("software engineer|data scientist|product manager|engineer|developer|programmer|teacher|"
         "doctor|nurse|student|designer|lawyer|writer|researcher|scientist|manager|accountant|chef|"
         "artist|musician|photographer|pharmacist|architect|journalist")
_LANGS = ("english|chinese|mandarin|cantonese|french|german|spanish|japanese|korean|italian|"
          "portuguese|russian|arabic|dutch|hindi")
_DURATION = (r"(?P<t>today|tonight|this week|this weekend|this month|next week|"
             r"for (?:a|one|two|three|four|five|\d+) (?:days?|weeks?))")

EN: tuple[Pattern, ...] = (
    Pattern("en_name", "en", r"\bmy name is " + V, "name", "identity", "User's name is {v}",
            "My name is Alice and I live in Paris.", "Alice", 4, 0.85),
    Pattern("en_call_me", "en", r"\b(?:please\s+|you can\s+)?call me " + V, "preferred_name",
            "identity", "Prefers to be called {v}", "Please call me Ali.", "Ali", 4, 0.85,
            stop=("back", "later", "tomorrow", "again")),
    Pattern("en_called", "en", r"\bi(?:'m| am) called " + V, "name", "identity",
            "User's name is {v}", "I'm called Bob.", "Bob", 4, 0.8),
    Pattern("en_live_in", "en", r"\bi (?:currently |now |still )?live in " + V, "home_location",
            "location", "Lives in {v}", "I live in Paris.", "Paris", 4, 0.8),
    Pattern("en_moved_to", "en", r"\bi(?:'ve| have)? (?:just |recently |finally )?moved to " + V,
            "home_location", "location", "Lives in {v}", "I moved to Berlin.", "Berlin", 4, 0.85),
    Pattern("en_based_in", "en", r"\bi(?:'m| am) (?:now )?based in " + V, "home_location",
            "location", "Lives in {v}", "I'm based in Lisbon.", "Lisbon", 4, 0.8),
    Pattern("en_from", "en", r"\bi(?:'m| am) (?:originally )?from " + V, "hometown", "identity",
            "Is from {v}", "I'm originally from Lyon.", "Lyon"),
    Pattern("en_come_from", "en", r"\bi come from " + V, "hometown", "identity", "Is from {v}",
            "I come from Kenya.", "Kenya"),
    Pattern("en_born_in", "en", r"\bi was born in " + V, "birthplace", "identity",
            "Was born in {v}", "I was born in Madrid.", "Madrid"),
    Pattern("en_work_at", "en", r"\bi (?:currently )?work (?:at|for) " + V, "employer", "identity",
            "Works at {v}", "I work at Acme Corp.", "Acme Corp"),
    Pattern("en_work_as", "en", r"\bi work as (?:an? )?" + V, "occupation", "identity",
            "Works as {v}", "I work as a nurse.", "nurse"),
    Pattern("en_job_is", "en", r"\bmy (?:job|profession|occupation) is (?:an? )?" + V, "occupation",
            "identity", "Works as {v}", "My profession is architecture.", "architecture"),
    Pattern("en_i_am_job", "en", rf"\bi(?:'m| am) an? (?P<v>{_JOBS})\b", "occupation", "identity",
            "Works as {v}", "I'm a software engineer.", "software engineer"),
    Pattern("en_favorite", "en", r"\bmy (?:favou?rite|fav) (?P<k>[a-z][a-z ]{1,30}?) is " + V,
            "favorite_{k}", "preference", "Favorite {k} is {v}", "My favourite colour is green.",
            "green"),
    Pattern("en_prefer", "en", r"\bi (?:really |generally |usually )?prefer " + V, "", "preference",
            "Prefers {v}", "I prefer tea over coffee.", "tea over coffee"),
    Pattern("en_love", "en", r"\bi (?:really |absolutely )?(?:love|adore|enjoy) " + V, "",
            "preference", "Loves {v}", "I love hiking.", "hiking"),
    Pattern("en_like", "en", r"\bi (?:really )?like " + V, "", "preference", "Likes {v}",
            "I really like jazz.", "jazz", confidence=0.65),
    Pattern("en_dislike", "en",
            r"\bi (?:really )?(?:hate|dislike|can't stand|cannot stand|don't like|do not like) " + V,
            "", "preference", "Dislikes {v}", "I hate cilantro.", "cilantro", 4,
            agent_type="边界"),
    Pattern("en_dont", "en",
            r"^(?:please\s+)?(?:don't|do not|never)\s+(?P<v>(?:use|call|mention|send|give|add|"
            r"include|write|reply|answer|talk|say|ask|recommend|suggest|show|remind|bring up)\b"
            r"[^.;!?\n]*)", "", "constraint", "Don't {v}", "Please don't use emojis.",
            "use emojis", 5, 0.85),
    Pattern("en_allergic", "en", r"\bi(?:'m| am) (?:severely |very )?allergic to " + V, "",
            "constraint", "Is allergic to {v}", "I'm allergic to peanuts.", "peanuts", 5, 0.85),
    Pattern("en_diet", "en",
            r"\bi(?:'m| am) (?:an? )?(?:strict )?(?P<v>vegetarian|vegan|pescatarian|gluten[- ]free|"
            r"lactose intolerant|halal|kosher)\b", "diet", "constraint", "Is {v}", "I am vegan.",
            "vegan", 4, 0.85),
    Pattern("en_dont_eat", "en", r"\bi (?:don't|do not|never|can't) eat " + V, "", "constraint",
            "Doesn't eat {v}", "I don't eat pork.", "pork", 4),
    Pattern("en_birthday", "en", r"\bmy birthday is (?:on )?" + V, "birthday", "identity",
            "Birthday is {v}", "My birthday is on March 3.", "March 3"),
    Pattern("en_age", "en", r"\bi(?:'m| am) (?P<v>\d{1,3}) (?:years old|yo)\b", "age", "identity",
            "Is {v} years old", "I'm 34 years old.", "34"),
    Pattern("en_relation_name", "en",
            rf"\bmy (?P<k>{_RELATIONS})(?:'s name is| is called| is named) " + V, "{k}_name",
            "identity", "Has a {k} named {v}", "My wife's name is Anna.", "Anna"),
    Pattern("en_have", "en",
            r"\bi have (?P<v>(?:a|an|one|two|three|four|five|\d+) (?:kids?|children|sons?|"
            r"daughters?|dogs?|cats?|brothers?|sisters?))\b", "", "identity", "Has {v}",
            "I have two kids.", "two kids"),
    Pattern("en_native_language", "en", r"\bmy (?:native|first|mother) (?:language|tongue) is " + V,
            "native_language", "identity", "Native language is {v}",
            "My native language is Portuguese.", "Portuguese"),
    Pattern("en_speak", "en", r"\bi speak " + V, "", "identity", "Speaks {v}",
            "I speak fluent Japanese.", "fluent Japanese", confidence=0.7),
    Pattern("en_learning", "en", r"\bi(?:'m| am) (?:currently )?(?:learning|studying) " + V, "",
            "goal", "Is learning {v}", "I'm learning Rust.", "Rust"),
    Pattern("en_goal", "en", r"\bmy (?:main |big |long[- ]term )?goal is (?:to )?" + V, "", "goal",
            "Goal: {v}", "My goal is to run a marathon.", "run a marathon", 4),
    Pattern("en_plan", "en", r"\bi(?:'m| am) (?:planning|trying|hoping) to " + V, "", "goal",
            "Plans to {v}", "I'm planning to buy a house.", "buy a house", confidence=0.65),
    Pattern("en_habit", "en", r"\bi (?:usually|always|often|normally|tend to) " + V, "", "habit",
            "Usually {v}", "I usually work out in the morning.", "work out in the morning",
            confidence=0.65, stop=("do", "am", "have")),
    Pattern("en_every", "en",
            r"\bevery (?P<k>morning|evening|day|night|week|weekend|monday|tuesday|wednesday|"
            r"thursday|friday|saturday|sunday),? i " + V, "", "habit", "Every {k}: {v}",
            "Every morning I drink green tea.", "drink green tea", confidence=0.7),
    Pattern("en_wake", "en", r"\bi (?:usually |always )?(?:wake up|get up) at " + V, "wake_time",
            "schedule", "Wakes up at {v}", "I wake up at 6am.", "6am"),
    Pattern("en_bed", "en", r"\bi (?:usually |always )?go to (?:bed|sleep) at " + V, "bed_time",
            "schedule", "Goes to bed at {v}", "I go to bed at 11pm.", "11pm"),
    Pattern("en_work_hours", "en",
            r"\bi work (?:from )?(?P<v>\d{1,2}(?::\d\d)?\s*(?:am|pm)? (?:to|-|until) "
            r"\d{1,2}(?::\d\d)?\s*(?:am|pm)?)", "work_hours", "schedule", "Works {v}",
            "I work 9am to 5pm.", "9am to 5pm"),
    Pattern("en_temp_location", "en",
            r"\bi(?:'m| am) (?:currently |staying |traveling |travelling )?(?:in|at|visiting) "
            r"(?P<v>[^\s,.;!?][^,.;!?\n]*?) " + _DURATION + r"\b", "current_location", "location",
            "Is in {v} ({t})", "I'm in Tokyo this week.", "Tokyo", 3, 0.8, ttl_ms=7 * DAY),
    Pattern("en_timezone", "en", r"\bmy time ?zone is " + V, "timezone", "schedule",
            "Time zone is {v}", "My timezone is CET.", "CET"),
    Pattern("en_reply_language", "en",
            rf"^(?:please\s+)?(?:always\s+)?(?:reply|answer|respond|talk to me|speak to me|write)"
            rf"(?: to me)? in (?P<v>{_LANGS})\b", "reply_language", "preference",
            "Wants replies in {v}", "Please reply in French.", "French", 4, 0.85,
            agent_type="对话风格"),
    Pattern("en_answer_length", "en",
            r"^(?:please\s+)?(?:keep|make) (?:your )?(?:answers|replies|responses) "
            r"(?P<v>short|brief|concise|detailed|long|simple)\b", "answer_length", "preference",
            "Wants {v} answers", "Keep your answers short.", "short", 4, 0.85,
            agent_type="对话风格"),
    Pattern("en_marital", "en", r"\bi(?:'m| am) (?:now )?(?P<v>married|single|divorced|engaged|widowed)\b",
            "relationship_status", "identity", "Is {v}", "I'm married.", "married"),
    Pattern("en_pronouns", "en", r"\bmy pronouns are " + V, "pronouns", "identity",
            "Pronouns: {v}", "My pronouns are they/them.", "they/them", 4),
    Pattern("en_education", "en",
            r"\bi (?:graduated from|studied at|went to university at|go to school at) " + V,
            "education", "identity", "Studied at {v}", "I graduated from MIT.", "MIT"),
)

ZH_RELATIONS = {"老婆": "wife", "妻子": "wife", "老公": "husband", "丈夫": "husband", "女朋友": "girlfriend",
         "男朋友": "boyfriend", "儿子": "son", "女儿": "daughter", "哥哥": "brother", "弟弟": "brother",
         "姐姐": "sister", "妹妹": "sister", "妈妈": "mother", "爸爸": "father", "狗": "dog", "猫": "cat"}
_ZH_RELATION_ALT = "|".join(sorted(ZH_RELATIONS, key=len, reverse=True))
_QUESTION_ZH = ("什么", "谁", "哪", "几", "吗", "呢", "多少", "怎么")

ZH: tuple[Pattern, ...] = (
    Pattern("zh_name", "zh", r"我叫" + ZV, "name", "identity", "用户名叫{v}", "我叫小明，今年二十岁。",
            "小明", 4, 0.85, stop=("你", "他", "她")),
    Pattern("zh_name2", "zh", r"我的名字(?:是|叫)" + ZV, "name", "identity", "用户名叫{v}",
            "我的名字是李雷。", "李雷", 4, 0.85),
    Pattern("zh_call_me", "zh", r"(?:你可以|请|以后|就)?(?<!不要)(?<!别)(?<!不许)叫我" + ZV, "preferred_name", "identity",
            "用户希望被称呼为{v}", "以后叫我阿杰吧。", "阿杰", 4, 0.85, agent_type="对话风格"),
    Pattern("zh_live", "zh", r"我(?:现在|目前|一直)?住在" + ZV, "home_location", "location",
            "用户住在{v}", "我住在上海。", "上海", 4, 0.8),
    Pattern("zh_home", "zh", r"我家在" + ZV, "home_location", "location", "用户住在{v}",
            "我家在杭州西湖边。", "杭州西湖边", 4, 0.75),
    Pattern("zh_moved", "zh", r"我(?:已经|刚|最近)?搬(?:家)?(?:到|去)了?" + ZV, "home_location",
            "location", "用户住在{v}", "我搬到了深圳。", "深圳", 4, 0.85),
    Pattern("zh_from", "zh", r"我来自" + ZV, "hometown", "identity", "用户来自{v}", "我来自成都。",
            "成都"),
    Pattern("zh_native", "zh", r"我是(?P<v>[^\s，。！？,.!?]{1,8}?)人(?=[\s，。！？,.!?]|$)", "hometown",
            "identity", "用户是{v}人", "我是湖南人。", "湖南",
            stop=("好", "坏", "个", "一个", "男", "女", "大", "老", "普通", "正常", "外地", "本地", "穷", "有钱")),
    Pattern("zh_born", "zh", r"我(?:出生在|出生于|生在)" + ZV, "birthplace", "identity",
            "用户出生在{v}", "我出生在西安。", "西安"),
    Pattern("zh_work_at", "zh", r"我(?:现在)?在(?P<v>[^\s，。！？,.!?]{1,20}?)(?:工作|上班)", "employer",
            "identity", "用户在{v}工作", "我在腾讯工作。", "腾讯", stop=("家",)),
    Pattern("zh_job", "zh", r"我的(?:职业|工作)是" + ZV, "occupation", "identity", "用户的职业是{v}",
            "我的职业是律师。", "律师"),
    Pattern("zh_iam_job", "zh", r"我是一名" + ZV, "occupation", "identity", "用户的职业是{v}",
            "我是一名护士。", "护士"),
    Pattern("zh_do_job", "zh", r"我是(?:做|搞)(?P<v>[^\s，。！？,.!?]{1,12}?)的", "occupation", "identity",
            "用户是做{v}的", "我是做设计的。", "设计"),
    Pattern("zh_favorite", "zh", r"我最喜欢的(?P<k>[^\s，。！？,.!?]{1,8}?)是" + ZV, "favorite_{k}",
            "preference", "用户最喜欢的{k}是{v}", "我最喜欢的水果是芒果。", "芒果"),
    Pattern("zh_like", "zh", r"我(?:很|非常|特别|真的|挺)?喜欢" + ZV, "", "preference", "用户喜欢{v}",
            "我喜欢爬山。", "爬山", confidence=0.7, stop=("你",)),
    Pattern("zh_dislike", "zh", r"我(?:很|非常|特别|真的)?(?:不喜欢|讨厌|受不了|反感)" + ZV, "",
            "preference", "用户不喜欢{v}", "我讨厌香菜。", "香菜", 4, agent_type="边界"),
    Pattern("zh_prefer", "zh", r"我(?:更)?(?:偏好|倾向于|更喜欢|更希望)" + ZV, "", "preference",
            "用户偏好{v}", "我更喜欢安静的地方。", "安静的地方"),
    Pattern("zh_dont", "zh", r"^(?:请|你|以后|请你|以后请)*(?:不要|别|不许|千万别)(?P<v>[^。！？!?；;\n]{2,60})",
            "", "constraint", "不要{v}", "以后不要叫我小名。", "叫我小名", 5, 0.85, agent_type="边界"),
    Pattern("zh_allergy", "zh", r"我对(?P<v>[^\s，。！？,.!?]{1,12}?)过敏", "", "constraint",
            "用户对{v}过敏", "我对花生过敏。", "花生", 5, 0.85, agent_type="边界"),
    Pattern("zh_diet", "zh", r"我(?:是)?(?P<v>吃素|素食者|素食主义者|吃清真)", "diet", "constraint",
            "用户饮食：{v}", "我吃素。", "吃素", 4),
    Pattern("zh_no_eat", "zh", r"我不(?P<k>吃|喝)" + ZV, "", "constraint", "用户不{k}{v}", "我不吃辣。",
            "辣", 4, stop=("饭", "东西")),
    Pattern("zh_birthday", "zh", r"我的生日是" + ZV, "birthday", "identity", "用户的生日是{v}",
            "我的生日是5月3日。", "5月3日"),
    Pattern("zh_age", "zh", r"我(?:今年)?(?P<v>\d{1,3}|[一二三四五六七八九十]{1,3})岁", "age", "identity",
            "用户{v}岁", "我今年28岁。", "28"),
    Pattern("zh_relation", "zh", rf"我(?:的)?(?P<k>{_ZH_RELATION_ALT})(?:叫|的名字是|名叫)" + ZV, "{k}_name",
            "identity", "用户的{k}叫{v}", "我女儿叫朵朵。", "朵朵"),
    Pattern("zh_have", "zh",
            r"我有(?P<v>(?:一|两|三|四|五|\d+)(?:个|只|条)(?:孩子|儿子|女儿|猫|狗|哥哥|姐姐|弟弟|妹妹))", "",
            "identity", "用户有{v}", "我有两个孩子。", "两个孩子"),
    Pattern("zh_native_language", "zh", r"我的母语是" + ZV, "native_language", "identity",
            "用户的母语是{v}", "我的母语是粤语。", "粤语"),
    Pattern("zh_learning", "zh", r"我(?:正在|最近在|在)学(?!校)(?:习)?" + ZV, "", "goal", "用户正在学{v}",
            "我正在学习日语。", "日语"),
    Pattern("zh_goal", "zh", r"我的(?:目标|梦想|计划)是" + ZV, "", "goal", "用户的目标是{v}",
            "我的目标是考上研究生。", "考上研究生", 4, agent_type="关系目标"),
    Pattern("zh_style", "zh",
            r"(?:我希望你|以后|请你?|你)(?:回复我|回答我?|说话|回复|跟我说话)?(?:尽量|可以|要)?"
            r"(?P<v>(?:更)?(?:简短|简洁|直接|详细|温柔|正式|幽默|口语化)(?:一点|一些|些)?)", "answer_style",
            "preference", "用户希望回复{v}", "以后回复我尽量直接一点。", "直接一点", 4, 0.85,
            agent_type="对话风格"),
    Pattern("zh_want", "zh", r"我(?:一直)?(?:想要|希望|打算)(?:以后)?(?!你)" + ZV, "", "goal",
            "用户希望{v}", "我希望明年能去留学。", "明年能去留学", confidence=0.65,
            agent_type="关系目标"),
    Pattern("zh_reply_language", "zh",
            r"(?:请|以后)?(?:用|说)(?P<v>中文|英文|英语|日语|粤语|法语|德语|韩语)(?:回答|回复|跟我说|和我聊)",
            "reply_language", "preference", "用户希望用{v}交流", "请用英文回答。", "英文", 4, 0.85,
            agent_type="对话风格"),
    Pattern("zh_habit", "zh", r"我(?:习惯|通常|一般|经常|总是|每天)(?!\d)(?:都)?" + ZV, "", "habit",
            "用户习惯{v}", "我习惯晚上跑步。", "晚上跑步", confidence=0.7, agent_type="偏好"),
    Pattern("zh_wake", "zh", r"我(?:每天|一般|通常)?(?:早上)?(?P<v>\d{1,2}(?:点|:\d\d)半?)起床", "wake_time",
            "schedule", "用户{v}起床", "我每天7点起床。", "7点"),
    Pattern("zh_sleep", "zh", r"我(?:每天|一般|通常)?(?:晚上)?(?P<v>\d{1,2}(?:点|:\d\d)半?)(?:睡觉|睡|上床)",
            "bed_time", "schedule", "用户{v}睡觉", "我一般11点睡觉。", "11点"),
    Pattern("zh_temp_location", "zh",
            r"我(?P<t>这周|这几天|今天|本周|这个月|下周|最近)(?:在|去)(?P<v>[^\s，。！？,.!?]{1,12}?)"
            r"(?=出差|旅游|玩|度假|开会|[\s，。！？,.!?]|$)", "current_location", "location",
            "用户{t}在{v}", "我这周在东京出差。", "东京", 3, 0.8, ttl_ms=7 * DAY),
    Pattern("zh_marital", "zh", r"我(?P<v>结婚了|已婚|单身|离婚了|订婚了)", "relationship_status",
            "identity", "用户{v}", "我结婚了。", "结婚了"),
    Pattern("zh_school", "zh", r"我(?:毕业于|在)(?P<v>[^\s，。！？,.!?]{1,20}?(?:大学|学院|中学|高中))",
            "education", "identity", "用户在{v}读书或毕业", "我毕业于清华大学。", "清华大学"),
    Pattern("zh_major", "zh", r"我是(?P<v>[^\s，。！？,.!?]{1,10}?)专业的", "major", "identity",
            "用户是{v}专业的", "我是计算机专业的。", "计算机"),
    Pattern("zh_timezone", "zh", r"我(?:的时区是|在)(?P<v>UTC[+-]\d{1,2}|GMT[+-]\d{1,2}|[东西]\d{1,2}区)",
            "timezone", "schedule", "用户的时区是{v}", "我的时区是UTC+8。", "UTC+8"),
)

ALL: tuple[Pattern, ...] = EN + ZH

#: English duration words → how long a time-bound statement stays valid.
_EN_NUM = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5}


def duration_ms(t: str, default: int | None) -> int | None:
    """Validity length for a duration phrase ('this week', 'for 3 days', '这周' …)."""
    t = (t or "").strip().lower()
    if not t:
        return default
    fixed = {"today": DAY, "tonight": DAY, "this weekend": 3 * DAY, "this week": 7 * DAY,
             "next week": 14 * DAY, "this month": 31 * DAY, "今天": DAY, "这几天": 5 * DAY,
             "这周": 7 * DAY, "本周": 7 * DAY, "下周": 14 * DAY, "这个月": 31 * DAY, "最近": 14 * DAY}
    if t in fixed:
        return fixed[t]
    m = re.match(r"for (\w+) (day|week)s?", t)
    if m:
        n = int(m.group(1)) if m.group(1).isdigit() else _EN_NUM.get(m.group(1), 1)
        return n * (DAY if m.group(2) == "day" else 7 * DAY)
    return default


QUESTION_WORDS_EN = ("what", "who", "where", "which", "how", "why", "when", "whether")
QUESTION_WORDS_ZH = _QUESTION_ZH
VAGUE_EN = ("it", "that", "this", "these", "those", "you", "your", "him", "her", "them", "so",
            "to know", "to ask", "a lot")

#: Seed-001 types → seed-000 agent types (used in agent conversations).
AGENT_TYPES = {"constraint": "边界", "preference": "偏好", "habit": "偏好", "goal": "关系目标",
               "identity": "重要事实", "location": "重要事实", "schedule": "重要事实"}
