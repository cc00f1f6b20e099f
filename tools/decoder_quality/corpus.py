"""The sentences the oracle speaks: smart-home announcements, short to long, in three sets.

- CALIBRATION sets a variant's int8 ranges and the search's choice (VariantMaker gets these
  alone).
- TUNING is what the gate's thresholds are derived from (derivation.py): the variants' audio
  on it, measured by PESQ-WB and by the product's distance.
- CHECK judges: the tests' gate and PESQ targets, and the study's confirmation that the
  thresholds hold on sentences nothing was chosen on.

Lengths vary on purpose (two words to a paragraph): a short sentence is mostly onset and
decay, where PESQ is harshest, a long one mostly steady speech. Numbers are written as words
(espeak-ng would read digits, but the point is the voice, not the reading).
"""

from __future__ import annotations

CALIBRATION = (
    "The back door is open.",
    "Good evening. The porch light will switch on at sunset, in about twenty minutes.",
    "The dishwasher is done.",
    "Reminder: the recycling goes out tonight, and tomorrow morning the truck comes early.",
    "Someone is at the front gate.",
    "The bedroom is at nineteen degrees. The heating will keep it there until seven.",
    "Low battery in the hallway smoke detector. Please replace it this week.",
    "Welcome home.",
    "The garage door has been open for half an hour. Should I close it?",
    "It is going to be windy this afternoon, with gusts of up to sixty kilometres an hour, "
    "so the patio umbrella should probably come in.",
    "The kettle has boiled.",
    "Your package was delivered to the side entrance at eleven forty.",
    "Water was detected under the kitchen sink. I have closed the main valve.",
    "Good night. All doors are locked, and the alarm is armed.",
    "The air in the office is stuffy; the carbon dioxide level is above one thousand.",
    "Timer finished.",
    "The baby monitor in the nursery has lost its connection.",
    "Tomorrow's forecast: cloudy in the morning, sunny spells after lunch, and a high of "
    "twenty three.",
    "The robot vacuum is stuck under the sofa in the living room.",
    "The freezer door has been left ajar.",
    "Your first meeting starts in fifteen minutes, and traffic on the ring road is heavy.",
    "The solar panels produced eleven kilowatt hours today, a little more than yesterday.",
    "Motion in the driveway.",
    "Please take your umbrella. Rain is expected from four o'clock until late in the evening.",
    "The guest room window is still open, and it is getting cold outside.",
    "Laundry is ready to be hung.",
    "The car has finished charging. The battery is at eighty percent.",
    "The nightly backup of the home server completed without errors.",
    "Quiet hours begin now. Notifications will be held until seven tomorrow morning.",
    "The doorbell rang while you were away. A short video clip was saved.",
    "The greenhouse is too warm: thirty one degrees. I have opened the roof vents.",
    "Dinner is in ten minutes.",
    "Every light on the ground floor is now off, except the one above the stairs.",
    "The pollen count is high today, so the bedroom windows will stay closed.",
    "Your medication reminder: two tablets with water, after breakfast.",
    "The front door was unlocked with the code for the cleaning service.",
    "Sunrise is at six twelve.",
    "The living room speaker group is now playing the evening playlist at a low volume.",
    "The water heater needs a new filter. I have added it to the shopping list.",
    "An update for the thermostat is available and will be installed at three in the "
    "morning, when nobody should notice the heating pause for a minute.",
)

TUNING = (
    "The mail has arrived.",
    "The attic fan has switched on because the roof space reached forty degrees.",
    "Hello. It is a quarter past eight, and the school bus leaves in twenty minutes.",
    "The fridge door is open.",
    "The humidity in the bathroom is high. The extractor fan will run for another ten minutes.",
    "Your order from the pharmacy is ready to collect.",
    "A window sensor in the study reports a weak battery.",
    "Storm warning for this evening. The garden furniture should be brought inside, and "
    "the awning has been retracted already.",
    "The oven has reached two hundred degrees.",
    "Nobody is home, so the thermostat has lowered the temperature to sixteen.",
    "The side gate is locked.",
    "The coffee machine is warming up.",
    "Good morning. It is Saturday, the sky is clear, and the rubbish collection is on Monday "
    "this week.",
    "The smoke alarm test was successful.",
    "There is a leak alert from the washing machine sensor in the utility room.",
    "Bedtime for the children in five minutes.",
    "The electricity price is low for the next three hours, so the dishwasher will start now.",
    "The pool pump has been running for six hours and will stop at noon.",
    "The camera on the terrace is offline.",
    "I turned off the bathroom heater, which had been on since this morning.",
    "The plants on the balcony need water. The soil has been dry for two days.",
    "Your sister is calling on the intercom.",
    "Outside it is minus three degrees, and the roads may be icy, so leave a little earlier.",
    "The basement dehumidifier is full.",
    "The front door opened at two in the morning. The alarm did not sound because it was disarmed.",
    "Three new voice messages.",
    "The heating schedule for the holidays has been saved.",
    "The weather station measured eleven millimetres of rain overnight.",
    "The hallway light has been on for three hours in an empty house.",
    "Movie mode is on: the lights are dimmed and the blinds are down.",
    "It is time to leave for the dentist.",
    "The internet connection is back after an outage of twelve minutes.",
)

CHECK = (
    "The garage is closed.",
    "The temperature in the kitchen dropped to fourteen degrees while the window was open.",
    "The tumble dryer has finished.",
    "Good afternoon. The delivery driver left a parcel behind the bins at the back.",
    "The porch camera saw a fox at midnight.",
    "The cat flap has been locked for the night.",
    "The air quality outside is poor today, so the ventilation has switched to indoor air.",
    "The toaster is on.",
    "The boiler pressure is low. Please top it up before the heating starts this evening.",
    "Somebody rang the bell twice, but did not leave a message.",
    "Wake up. It is seven o'clock, twelve degrees, and there is light fog over the river "
    "until about nine.",
    "The bathroom window is open.",
    "The lawn mower has returned to its dock.",
    "The bedroom curtains will open at half past six tomorrow.",
    "Energy report: the house used nine kilowatt hours today, mostly for cooking and "
    "heating water.",
    "Your taxi is outside.",
    "The aquarium light switched off on schedule.",
    "There is frost on the windscreen; the car's heater has been started for you.",
    "A glass break sensor in the dining room was triggered.",
    "The shed door is still unlocked.",
    "The printer in the office has run out of paper.",
    "Today is bin day.",
    "The thermostat in the nursery lost power for a minute and has restarted.",
    "Everyone has left the house. The lights are off, the doors are locked, and the robot "
    "vacuum will start cleaning in five minutes.",
)
