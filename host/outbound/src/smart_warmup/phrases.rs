//! The built-in phrase bank pool messages are written from when the sending
//! account has no AI key. A message picks one entry of each part, so the
//! bank holds over a billion distinct new-thread texts; the store still refuses
//! two equal texts on one pool day (a unique index), and the writer then
//! draws again.

pub const FIRST_NAMES: &[&str] = &[
    "Alex", "Sam", "Jordan", "Taylor", "Morgan", "Casey", "Robin", "Jamie", "Avery", "Riley",
    "Quinn", "Drew", "Elliot", "Harper", "Rowan", "Sage",
];

pub const TONES: &[&str] = &[
    "friendly",
    "formal",
    "concise",
    "enthusiastic",
    "warm",
    "direct",
];

pub const INDUSTRIES: &[&str] = &[
    "software",
    "logistics",
    "healthcare",
    "financial services",
    "manufacturing",
    "retail",
    "education",
    "real estate",
    "marketing services",
    "construction",
    "energy",
    "hospitality",
];

pub const TOPICS: &[&str] = &[
    "the Q3 roadmap",
    "the onboarding checklist",
    "the vendor shortlist",
    "next week's workshop",
    "the budget review",
    "the customer survey",
    "the hiring plan",
    "the office move",
    "the quarterly report",
    "the pricing update",
    "the training schedule",
    "the partner call",
    "the product demo",
    "the team offsite",
    "the support backlog",
    "the release notes",
    "the contract renewal",
    "the planning doc",
    "the newsletter draft",
    "the conference booth",
    "the data migration",
    "the kickoff agenda",
    "the site visit",
    "the style guide",
    "the inventory count",
    "the launch timeline",
    "the board update",
    "the case study",
    "the security review",
    "the webinar",
    "the feedback round",
    "the project charter",
];

pub const SUBJECT_FORMS: &[&str] = &[
    "Quick question about {topic}",
    "Thoughts on {topic}?",
    "Following up on {topic}",
    "{Topic}: a small idea",
    "Re-thinking {topic}",
    "{Topic} next week",
    "A note on {topic}",
    "Checking in about {topic}",
    "{Topic}: your take?",
    "Update on {topic}",
    "About {topic}",
    "{Topic} - quick sync?",
];

pub const GREETINGS: &[&str] = &[
    "Hi {name},",
    "Hello {name},",
    "Hey {name},",
    "Good morning {name},",
    "Hi there {name},",
    "Dear {name},",
    "{name},",
    "Hope you're well, {name}.",
];

pub const OPENERS: &[&str] = &[
    "I was going through my notes this morning and thought of you.",
    "I hope your week is off to a good start.",
    "Thanks again for the chat the other day.",
    "It has been a busy few days on our side.",
    "I wanted to pick up where we left off.",
    "Something came up in our team meeting that I'd like your view on.",
    "I finally had a moment to look at this properly.",
    "A colleague asked me about this and I realised we never closed the loop.",
    "I've been meaning to write about this for a while.",
    "Quick one before the weekend.",
    "I'm putting together a few ideas and yours would help.",
    "We had an interesting discussion about this yesterday.",
    "I came across something related and it made me think of our last call.",
    "Now that things have calmed down a little, I'm back on this.",
    "I'm sorting out my plans for the coming weeks.",
];

pub const MIDDLES: &[&str] = &[
    "We're looking at {topic} again and I think there's a simpler way to run it.",
    "For {topic}, I'd like to try a lighter process this time.",
    "The team in {industry} keeps asking how others handle {topic}.",
    "I drafted a short outline for {topic} and would love a second pair of eyes.",
    "There are a couple of open points on {topic} that we should settle soon.",
    "My sense is that {topic} could move faster if we split it into two parts.",
    "I spoke with a few people in {industry} and {topic} came up every time.",
    "We learned a lot from last time, so {topic} should go more smoothly.",
    "I'm not sure the current plan for {topic} still fits our timeline.",
    "Could we look at {topic} together for half an hour sometime?",
    "I've collected some numbers on {topic} that surprised me a little.",
    "It seems {topic} is the thing most of our {industry} peers are busy with.",
    "I'd rather not rush {topic}, but we can't leave it much longer either.",
    "The feedback on {topic} has been mostly positive, with a few good questions.",
    "I think we agree on {topic}, it's mostly a question of timing.",
    "Before we commit to {topic}, I want to check a couple of assumptions.",
    "Someone suggested we look at how {topic} worked for a team in {industry}.",
    "I put {topic} on the agenda for next week, hope that works.",
    "We can probably reuse most of what we did for {topic} last quarter.",
    "My main worry about {topic} is keeping everyone in the loop.",
    "I sketched two options for {topic}; neither is perfect, but both are workable.",
    "{Topic} is smaller than it looks once you break it down.",
    "I'd value your experience with {topic}, since you've done it before.",
    "We've had a few changes that affect {topic}, nothing dramatic.",
    "I think a short checklist would make {topic} easier for everyone.",
    "I'm still gathering input on {topic} from the wider team.",
    "Do you remember how long {topic} took us the last time?",
    "There's a chance we can wrap up {topic} earlier than planned.",
    "I've been reading up on {topic} and found a couple of good ideas.",
    "Let's keep {topic} simple and see how far that gets us.",
];

pub const QUESTIONS: &[&str] = &[
    "What do you think?",
    "Does that sound reasonable to you?",
    "Would that work on your end?",
    "Any thoughts before I share it more widely?",
    "Am I missing something obvious?",
    "How does your calendar look this week?",
    "Would you do it differently?",
    "Is this on your radar as well?",
    "Happy to hear any concerns.",
    "Could you share your notes when you get a chance?",
    "Should we loop in anyone else?",
    "Is Thursday still good for a quick call?",
    "What would you change first?",
    "Do you have ten minutes to talk it through?",
    "Let me know if this is useful.",
];

pub const CLOSINGS: &[&str] = &[
    "No rush on this.",
    "Thanks in advance.",
    "Talk soon.",
    "Looking forward to hearing from you.",
    "Have a great rest of the week.",
    "Appreciate your help as always.",
    "Enjoy your day.",
    "Speak soon.",
    "Thanks for reading this far.",
    "Hope all is well with the team.",
];

pub const SIGNOFFS: &[&str] = &[
    "Best,",
    "Thanks,",
    "Cheers,",
    "Kind regards,",
    "All the best,",
    "Regards,",
    "Warmly,",
    "Many thanks,",
];

pub const REPLY_OPENERS: &[&str] = &[
    "Thanks for the note.",
    "Good to hear from you.",
    "Thanks for sending this over.",
    "Great question.",
    "Thanks, this is helpful.",
    "Appreciate you thinking of me.",
    "Good timing, I was about to write to you.",
    "Thanks for the update.",
    "Interesting, thanks for sharing.",
    "Sorry for the slow reply.",
    "Thanks for following up.",
    "Glad you brought this up.",
];

pub const REPLY_BODIES: &[&str] = &[
    "I agree that {topic} deserves a closer look.",
    "For {topic}, I'd start small and see what sticks.",
    "We tried something similar with {topic} and it went well.",
    "I think your outline for {topic} covers the main points.",
    "On {topic}, timing is the part I'd think about most.",
    "I'm happy to help with {topic} where I can.",
    "Splitting {topic} into two steps sounds sensible to me.",
    "I'd keep {topic} as simple as possible for now.",
    "The numbers on {topic} look about right from what I've seen.",
    "I can share what worked for us on {topic} if that helps.",
    "Let's talk {topic} through on a call, it'll be quicker.",
    "I don't see any blockers on {topic} from my side.",
    "I'd check with the wider team before settling {topic}.",
    "{Topic} is on my list for this week as well.",
    "I like the direction you're taking with {topic}.",
    "My only question on {topic} is who owns the follow-up.",
    "We had the same discussion about {topic} last month.",
    "I think {topic} can wait a week without any harm.",
    "Sounds good on {topic}, let's go with your first option.",
    "I'll pull together my notes on {topic} and send them over.",
];

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn the_bank_holds_over_a_billion_texts() {
        let new_threads = [
            TOPICS.len(),
            SUBJECT_FORMS.len(),
            GREETINGS.len(),
            OPENERS.len(),
            MIDDLES.len(),
            QUESTIONS.len(),
            CLOSINGS.len(),
            SIGNOFFS.len(),
        ]
        .iter()
        .product::<usize>();
        assert!(new_threads > 1_000_000_000, "{new_threads}");
    }
}
