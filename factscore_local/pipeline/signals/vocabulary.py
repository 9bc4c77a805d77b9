"""The fixed vocabularies of slot values: countries and their demonyms, occupations, number
words, US states. The slot check reads them (``slots.py``, ``slot_roles.py``,
``place_frames.py``, ``rivals.py``), and the counterfactual probes draw replacement values
from them (``labels/replacements.py``)."""

from __future__ import annotations

__all__ = ["COUNTRIES", "NATIONALITIES", "NUMBER_WORDS", "OCCUPATIONS", "US_STATES"]

# Country -> its demonym: the nationalities a fact may state, and the countries a place
# slot swaps among (a country for a country, a city for a city).
COUNTRIES = {
    "United States": "American", "Canada": "Canadian", "Mexico": "Mexican",
    "Brazil": "Brazilian", "Argentina": "Argentine", "Chile": "Chilean",
    "Colombia": "Colombian", "Peru": "Peruvian", "Venezuela": "Venezuelan",
    "Cuba": "Cuban", "Uruguay": "Uruguayan", "England": "English", "Scotland": "Scottish",
    "Wales": "Welsh", "Ireland": "Irish", "France": "French", "Germany": "German",
    "Italy": "Italian", "Spain": "Spanish", "Portugal": "Portuguese", "Netherlands": "Dutch",
    "Belgium": "Belgian", "Switzerland": "Swiss", "Austria": "Austrian", "Sweden": "Swedish",
    "Norway": "Norwegian", "Denmark": "Danish", "Finland": "Finnish", "Iceland": "Icelandic",
    "Poland": "Polish", "Hungary": "Hungarian", "Greece": "Greek", "Romania": "Romanian",
    "Russia": "Russian", "Ukraine": "Ukrainian", "Turkey": "Turkish", "Egypt": "Egyptian",
    "Nigeria": "Nigerian", "Kenya": "Kenyan", "Ghana": "Ghanaian", "Ethiopia": "Ethiopian",
    "South Africa": "South African", "Morocco": "Moroccan", "Senegal": "Senegalese",
    "Israel": "Israeli", "Iran": "Iranian", "Iraq": "Iraqi", "India": "Indian",
    "Pakistan": "Pakistani", "China": "Chinese", "Japan": "Japanese",
    "South Korea": "South Korean", "Vietnam": "Vietnamese", "Thailand": "Thai",
    "Philippines": "Filipino", "Indonesia": "Indonesian", "Australia": "Australian",
    "New Zealand": "New Zealander", "Latvia": "Latvian", "Czech Republic": "Czech",
}  # fmt: skip
NATIONALITIES = tuple(COUNTRIES.values())
# The places of the place frames (``place_frames.py``) beside the countries.
US_STATES = (
    "Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Connecticut",
    "Delaware", "Florida", "Georgia", "Hawaii", "Idaho", "Illinois", "Indiana", "Iowa",
    "Kansas", "Kentucky", "Louisiana", "Maine", "Maryland", "Massachusetts", "Michigan",
    "Minnesota", "Mississippi", "Missouri", "Montana", "Nebraska", "Nevada", "New Hampshire",
    "New Jersey", "New Mexico", "New York", "North Carolina", "North Dakota", "Ohio",
    "Oklahoma", "Oregon", "Pennsylvania", "Rhode Island", "South Carolina", "South Dakota",
    "Tennessee", "Texas", "Utah", "Vermont", "Virginia", "Washington", "West Virginia",
    "Wisconsin", "Wyoming",
)  # fmt: skip

# Occupations as groups of words for one job: a replacement comes from another group, and
# none of that group's words may occur in the page.
OCCUPATIONS = (
    ("actor", "actress"), ("singer", "vocalist"), ("songwriter",), ("rapper",),
    ("politician",), ("lawyer", "attorney"), ("footballer", "soccer player"),
    ("basketball player",), ("tennis player",), ("boxer",), ("cricketer",),
    ("writer", "author"), ("novelist",), ("poet",), ("journalist",), ("painter",),
    ("composer",), ("director", "filmmaker"), ("producer",), ("architect",),
    ("physician", "doctor"), ("engineer",), ("scientist",), ("economist",),
    ("historian",), ("archaeologist",), ("teacher",), ("professor",), ("model",),
    ("dancer",), ("comedian",), ("businessman", "businesswoman", "entrepreneur"),
    ("diplomat",), ("soldier",), ("guitarist",), ("drummer",), ("pianist",),
    ("racing driver",), ("coach",), ("television presenter",), ("priest",),
    ("photographer",), ("mountaineer",), ("chef",), ("nurse",), ("pilot",),
)  # fmt: skip
NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                "ten", "eleven", "twelve"]  # fmt: skip
