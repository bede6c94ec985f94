"""Stop words: one English list, and the named lists of words that frame rather than inform.

Each list is one concern. Callers combine them: search drops :data:`STOP_WORDS` (and
:data:`QUESTION_WORDS` from a question); support checking drops :data:`STOP_WORDS` and
:data:`CLAIM_FRAMING_WORDS`; query expansion also drops :data:`SCIENCE_WORDS`.
"""

from __future__ import annotations

# English function words: they never say what a text is about.
STOP_WORDS = frozenset("""
a about above across after again against all almost also although always am among an and another any
are aren around as at be became because been before being below between both but by can cannot could
did didn do does doesn doing done don down during each either else etc even ever every few for from
further had has hasn have having he her here hers herself him himself his how however i if in into is
isn it its itself just least less let like made make makes many may me might more most much must my
myself neither no nor not now of off often on once one only onto or other others otherwise our ours
ourselves out over own per perhaps rather really same several shall she should since so some such than
that the their theirs them themselves then there therefore these they this those though through thus
to too toward towards under until up upon us use used uses using very via was wasn we well were
weren what whatever when where whether which while who whom whose why will with within without would
yet you your yours yourself yourselves
""".split())

# The commonest English function words: a text with enough of them among its words is English.
COMMON_ENGLISH_WORDS = frozenset("""
the of and to in a is that for are with as on by this be was were it from or an at which we not can these has have
been their than more also between but its our such both may other into when there
""".split())

# Function words that say nothing about what a number measures ("of", "was", "and" in "5 and 7").
NUMBER_FRAME_WORDS = frozenset("""
a an the and or but nor of in on at to for from by with without into onto over under between among than as per via
is are was were be been being has have had do does did can could may might must shall should will would this that
these those it its their there which who whom whose what when where while also only about after before during each
either both all any some such very not no we our they them he she his her
""".split())

# Words that frame a research question rather than name its subject ("describe the main methods of").
QUESTION_WORDS = frozenset("""
approach approaches current describe discuss example examples explain give key list main method methods
recent show state studies study tell way ways work works
""".split())

# Words that frame a claim about research ("the paper proposes a new model") rather than state it,
# and the pieces of "e.g." and "et al." that a tokenizer leaves behind.
CLAIM_FRAMING_WORDS = frozenset("""
paper papers work works show shows shown propose proposes proposed present presents presented approach
method methods model models based result results new study studies answer question questions e g al et
""".split())

# Words frequent in any scientific text: they never say what a passage is about.
SCIENCE_WORDS = frozenset("""
abstract al analysis based case cases data different due effect effects et fig figure first found high
important increase large low new number paper proposed result results section shown significant similar specific
table three total two type types value values various
""".split())
