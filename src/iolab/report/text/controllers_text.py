"""The RAID cards in `iolab env`'s text: a line per card, a line per VD with its cache policy
as configured and as in effect, and a warning line where they differ."""

from __future__ import annotations

from iolab.errors import JSONShapeError
from iolab.model import JSON, JSONObject, codec
from iolab.targets.controllers.model import CachePolicy, Controller, VirtualDrive, differs
from iolab.units import human_bytes


def lines(facts: JSONObject) -> list[str]:
    """`facts["controllers"]` and `facts["controller_problems"]` as `iolab env` shows them:
    nothing when no tool found a card."""
    found = facts.get("controllers")
    cards = [_card_of(c) for c in found] if isinstance(found, list) else []
    shown = [line for card in cards if card is not None for line in _card(card)]
    problems = facts.get("controller_problems")
    if isinstance(problems, list):
        shown += [f"problem   {problem}" for problem in problems if isinstance(problem, str)]
    return shown


def _card_of(found: JSON) -> Controller | None:
    """A card as `iolab env` recorded it (here or on another host); None when it is not one."""
    try:
        return codec.from_json(Controller, found, "a RAID card")
    except JSONShapeError:
        return None


def _card(card: Controller) -> list[str]:
    facts = [
        card.model or "model not reported",
        f"firmware {card.firmware}" if card.firmware else None,
        f"serial {card.serial}" if card.serial else None,
        f"cache {_bytes(card.cache_bytes)}",
        f"battery {card.battery.summary()}",
        f"cache ratio {card.cache_ratio.summary()}" if card.cache_ratio else None,
        f"drive write cache {card.drive_cache}" if card.drive_cache else None,
        "cache disabled" if card.cache_ok is False else None,
    ]
    head = f"controller {card.tool} {card.address}: " + ", ".join(f for f in facts if f)
    return [head, *(line for vd in card.drives for line in _drive(vd, card))]


def _drive(vd: VirtualDrive, card: Controller) -> list[str]:
    about = [
        vd.raid_level,
        _bytes(vd.size_bytes) if vd.size_bytes is not None else None,
        vd.block_device,
        f"name {vd.name}" if vd.name else None,
    ]
    policy = [f"configured {_policy(vd.configured)}", f"in effect {_policy(vd.effective)}"]
    if vd.drive_cache:
        policy.append(f"drive write cache {vd.drive_cache}")
    shown = [f"vd        {vd.id}: {'; '.join([', '.join(a for a in about if a), *policy])}"]
    warning = differs(vd, card)
    return [*shown, f"warning   {vd.id}: {warning}"] if warning else shown


def _policy(policy: CachePolicy | None) -> str:
    return f"{policy.summary()} ({policy.words})" if policy else "not reported"


def _bytes(size: int | None) -> str:
    return "not reported" if size is None else "none" if size == 0 else human_bytes(size)
