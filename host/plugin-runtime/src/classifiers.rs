//! Reply classifiers (`reply-classifier` world): label an inbound reply to a
//! sequence step as one of [`REPLY_LABELS`]. The host checks every verdict,
//! so a plugin cannot store a label the product does not know.
//!
//! What every classifier kind shares lives here too: the call with its AI
//! bridge and nesting slot ([`PluginRuntime::run_classifier`]), the checks
//! of a verdict's confidence and model, and the listing. Domain classifiers
//! are in `domain_classifiers.rs`.

use crate::ai::AiBridge;
use crate::bindings::reply_classifier::ReplyClassifier;
use crate::bindings::types::{self as wit, ClassifierMetadata, ReplyInput};
use crate::calls::GuestResult;
use crate::error::CallError;
use crate::manifest::PluginKind;
use crate::runtime::{KindPre, LoadedPlugin, PluginMetadata, PluginRuntime, PluginSource};
use crate::state::CallState;
use crate::warm::Warm;
use serde::Serialize;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;
use wasmtime::Store;

/// The seven reply labels of spec/1, the only ones a classifier may answer.
pub const REPLY_LABELS: [&str; 7] = [
    "interested",
    "not_now",
    "objection",
    "ooo",
    "unsubscribe",
    "bounce",
    "other",
];

/// Characters of a verdict's model name that are kept.
const MAX_MODEL_CHARS: usize = 200;

/// A checked classifier answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplyVerdict {
    /// One of [`REPLY_LABELS`].
    pub label: String,
    /// 0.0-1.0 (a finite value outside is clamped).
    pub confidence: f64,
    /// The model (or rules revision) that decided: the completion's model for
    /// an AI classifier, `rules-v1` for the rules; the classifier's metadata
    /// model when the plugin left it empty.
    pub model: String,
    /// Wall-clock time of the call, AI completions included.
    pub latency_ms: u64,
}

/// One loaded classifier (reply or domain), for picking one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassifierInfo {
    /// Plugin id, the argument of [`PluginRuntime::classify_reply`] or
    /// [`PluginRuntime::classify_domain`].
    pub id: String,
    /// Display name from the component's metadata.
    pub name: String,
    /// Model or rules revision from the component's metadata.
    pub model: String,
    pub description: String,
    /// The classifier calls the `ai` import: it needs an [`AiBridge`] (the
    /// account's AI keys) and spends AI credits.
    pub uses_ai: bool,
    /// An SDK example (`example = true` in its manifest).
    pub example: bool,
    pub source: PluginSource,
}

/// One loaded reply classifier ([`PluginRuntime::reply_classifiers`]).
pub type ReplyClassifierInfo = ClassifierInfo;

/// What [`PluginRuntime::run_classifier`] hands back: the guest's unchecked
/// answer, the model its metadata names (for a verdict that names none) and
/// the wall-clock time of the call.
pub(crate) struct Classified<T> {
    pub output: T,
    pub metadata_model: String,
    pub latency_ms: u64,
}

/// The metadata of a reply or domain classifier.
fn classifier_metadata(p: &LoadedPlugin) -> Option<&ClassifierMetadata> {
    match &p.metadata {
        Some(PluginMetadata::ReplyClassifier(m) | PluginMetadata::DomainClassifier(m)) => Some(m),
        _ => None,
    }
}

/// A verdict's confidence: a finite number, clamped to 0.0-1.0. NaN and the
/// infinities are refused rather than stored as a made-up certainty.
pub(crate) fn checked_confidence(confidence: f64) -> Result<f64, CallError> {
    if !confidence.is_finite() {
        return Err(CallError::InvalidOutput(format!(
            "confidence {confidence} is not a number between 0 and 1"
        )));
    }
    Ok(confidence.clamp(0.0, 1.0))
}

/// A verdict's model: trimmed, the metadata's model when empty, at most
/// [`MAX_MODEL_CHARS`] characters (it is stored with every verdict).
pub(crate) fn verdict_model(model: &str, metadata_model: &str) -> String {
    let model = model.trim();
    let model = if model.is_empty() {
        metadata_model
    } else {
        model
    };
    model.chars().take(MAX_MODEL_CHARS).collect()
}

/// A value a plugin answered, cut for an error message.
pub(crate) fn shown(value: &str) -> String {
    value.chars().take(100).collect()
}

/// The closure [`PluginRuntime::run_classifier`] runs: instantiates `$pre` in
/// the call's store and calls `$iface().call_classify(&$input)`.
macro_rules! classify_with {
    ($pre:ident, $iface:ident, $input:ident) => {
        |mut store: wasmtime::Store<crate::state::CallState>| async move {
            let r = match $pre.instantiate_async(&mut store).await {
                Ok(i) => i.$iface().call_classify(&mut store, &$input).await,
                Err(e) => Err(e),
            };
            (store, r)
        }
    };
}
pub(crate) use classify_with;

/// Calls `classify` of `instance` for each input, each call with a CPU
/// budget of `ticks`. A verdict the plugin refuses is that reply's error; a
/// trap ends the batch.
async fn classify_each(
    mut store: Store<CallState>,
    instance: &ReplyClassifier,
    inputs: &[ReplyInput],
    ticks: u64,
) -> (
    Store<CallState>,
    wasmtime::Result<Vec<Result<wit::ReplyVerdict, CallError>>>,
) {
    let mut answers = Vec::with_capacity(inputs.len());
    for input in inputs {
        store.data_mut().start_call(ticks);
        let answer = instance
            .outreach_plugin_classifier()
            .call_classify(&mut store, input)
            .await;
        match answer {
            Ok(Ok(v)) => answers.push(Ok(v)),
            Ok(Err(e)) => answers.push(Err(match store.data().denials.first() {
                Some(d) => CallError::Denied(d.clone()),
                None => e.into(),
            })),
            Err(trap) => return (store, Err(trap)),
        }
    }
    (store, Ok(answers))
}

/// Checks a verdict: the label must be one of the seven exactly, the
/// confidence a finite number (clamped to 0.0-1.0).
pub(crate) fn check_verdict(
    v: wit::ReplyVerdict,
    metadata_model: &str,
    latency_ms: u64,
) -> Result<ReplyVerdict, CallError> {
    if !REPLY_LABELS.contains(&v.label.as_str()) {
        return Err(CallError::InvalidOutput(format!(
            "label {:?} is not one of {}",
            shown(&v.label),
            REPLY_LABELS.join(", ")
        )));
    }
    Ok(ReplyVerdict {
        confidence: checked_confidence(v.confidence)?,
        model: verdict_model(&v.model, metadata_model),
        label: v.label,
        latency_ms,
    })
}

impl PluginRuntime {
    /// Runs one classifier call (either kind) with `call`, which instantiates
    /// the component and calls its `classify`.
    ///
    /// A classifier whose metadata says `uses_ai: false` gets no bridge: it
    /// cannot spend the account's credits. With a bridge, the call first
    /// takes a nesting slot, because the bridge runs an LLM plugin while this
    /// call holds its instance slot; bounding such calls to half the slots
    /// keeps the LLM calls from waiting on the very calls that wait for them.
    pub(crate) async fn run_classifier<T, F, Fut>(
        &self,
        p: &LoadedPlugin,
        ai: Option<Arc<dyn AiBridge>>,
        call: F,
    ) -> Result<Classified<T>, CallError>
    where
        F: FnOnce(Store<CallState>) -> Fut,
        Fut: Future<Output = (Store<CallState>, GuestResult<T>)>,
    {
        self.run_classifier_calls(p, ai, 1, call).await
    }

    /// [`run_classifier`](Self::run_classifier) for `calls` calls into one
    /// instance.
    pub(crate) async fn run_classifier_calls<T, F, Fut>(
        &self,
        p: &LoadedPlugin,
        ai: Option<Arc<dyn AiBridge>>,
        calls: u32,
        call: F,
    ) -> Result<Classified<T>, CallError>
    where
        F: FnOnce(Store<CallState>) -> Fut,
        Fut: Future<Output = (Store<CallState>, GuestResult<T>)>,
    {
        let (metadata_model, uses_ai) = classifier_metadata(p)
            .map(|m| (m.model.clone(), m.uses_ai))
            .unwrap_or_default();
        let ai = ai.filter(|_| uses_ai);
        let started = Instant::now();
        let _nesting = match &ai {
            Some(_) => Some(
                tokio::time::timeout(
                    p.manifest.limits.timeout(),
                    self.inner.nesting_slots.acquire(),
                )
                .await
                .map_err(|_| {
                    CallError::Timeout(format!(
                        "wall-clock timeout of {} ms exceeded waiting for a slot",
                        p.manifest.limits.timeout_ms
                    ))
                })?
                .map_err(|e| CallError::Instantiate(e.to_string()))?,
            ),
            None => None,
        };
        let output = self
            .invoke_calls(p, None, true, calls, |mut store| {
                store.data_mut().ai = ai;
                call(store)
            })
            .await?;
        Ok(Classified {
            output,
            metadata_model,
            latency_ms: started.elapsed().as_millis() as u64,
        })
    }

    /// Classifies one reply with the `reply-classifier` plugin `plugin_id`.
    ///
    /// `ai` answers the plugin's `ai.complete` imports for this call only
    /// (the calling account's AI key chain); with `None` they fail with
    /// [`NO_AI_PROVIDER`](crate::NO_AI_PROVIDER), which an AI classifier
    /// returns as [`CallError::Permanent`]. A classifier whose metadata says
    /// `uses_ai: false` never gets the bridge. The usual sandbox applies: a fresh
    /// store, the manifest's memory cap, CPU deadline and wall-clock timeout
    /// (which covers the completions), and no network. A verdict whose label
    /// is not one of [`REPLY_LABELS`] or whose confidence is not a number is
    /// [`CallError::InvalidOutput`].
    pub async fn classify_reply(
        &self,
        plugin_id: &str,
        input: ReplyInput,
        ai: Option<Arc<dyn AiBridge>>,
    ) -> Result<ReplyVerdict, CallError> {
        let p = self.plugin_of(plugin_id, PluginKind::ReplyClassifier)?;
        let KindPre::Classifier(pre) = &p.pre else {
            unreachable!("kind checked by plugin_of")
        };
        let c = self
            .run_classifier(
                &p,
                ai,
                classify_with!(pre, outreach_plugin_classifier, input),
            )
            .await?;
        check_verdict(c.output, &c.metadata_model, c.latency_ms)
    }

    /// Classifies several replies, which must all be one account's, with
    /// the `reply-classifier` plugin `plugin_id` in one instance.
    ///
    /// A component starts from scratch in every instance, so whatever it
    /// builds on first use (the rules classifier compiles its phrase
    /// patterns) is built once per batch rather than once per
    /// reply. Each reply is still its own call with its own CPU budget and
    /// AI-call allowance; the wall-clock timeout is the manifest's times
    /// the number of replies. Sharing an instance shares the guest's memory
    /// between the calls, which is why a batch holds one account's replies.
    ///
    /// A verdict the plugin refuses or gets wrong is that reply's error. A
    /// trap, an exhausted budget or a timeout ends the whole batch with the
    /// error: the caller classifies those replies one by one instead, so
    /// that one hostile message cannot decide the others' fate.
    pub async fn classify_replies(
        &self,
        plugin_id: &str,
        inputs: Vec<ReplyInput>,
        ai: Option<Arc<dyn AiBridge>>,
    ) -> Result<Vec<Result<ReplyVerdict, CallError>>, CallError> {
        if inputs.is_empty() {
            return Ok(Vec::new());
        }
        let p = self.plugin_of(plugin_id, PluginKind::ReplyClassifier)?;
        let KindPre::Classifier(pre) = &p.pre else {
            unreachable!("kind checked by plugin_of")
        };
        let ticks = crate::calls::cpu_ticks(&p);
        let calls = u32::try_from(inputs.len()).unwrap_or(u32::MAX);
        let c = self
            .run_classifier_calls(&p, ai, calls, |mut store| async move {
                let instance = match pre.instantiate_async(&mut store).await {
                    Ok(i) => i,
                    Err(e) => return (store, Err(e)),
                };
                let (store, answers) = classify_each(store, &instance, &inputs, ticks).await;
                (store, answers.map(Ok))
            })
            .await?;
        let latency_ms = c.latency_ms / u64::from(calls);
        Ok(c.output
            .into_iter()
            .map(|answer| answer.and_then(|v| check_verdict(v, &c.metadata_model, latency_ms)))
            .collect())
    }

    /// [`classify_replies`](Self::classify_replies) for the replies of
    /// `account_id`, in the account's warm instance when one is kept (see
    /// `warm.rs`), and keeping the instance for its next batch. A classifier
    /// that uses AI gets a fresh instance every time, as with
    /// `classify_replies`.
    pub async fn classify_account_replies(
        &self,
        plugin_id: &str,
        account_id: i64,
        inputs: Vec<ReplyInput>,
    ) -> Result<Vec<Result<ReplyVerdict, CallError>>, CallError> {
        if inputs.is_empty() {
            return Ok(Vec::new());
        }
        let p = self.plugin_of(plugin_id, PluginKind::ReplyClassifier)?;
        let metadata_model = match classifier_metadata(&p) {
            Some(m) if !m.uses_ai => m.model.clone(),
            _ => return self.classify_replies(plugin_id, inputs, None).await,
        };
        let KindPre::Classifier(pre) = &p.pre else {
            unreachable!("kind checked by plugin_of")
        };
        let ticks = crate::calls::cpu_ticks(&p);
        let calls = u32::try_from(inputs.len()).unwrap_or(u32::MAX);
        let (session, instance, done) = match self.inner.warm.take(&p, account_id) {
            Some(w) => (Some(w.session), Some(w.instance), w.calls),
            None => (None, None, 0),
        };
        let started = Instant::now();
        let (output, session) = self
            .invoke_session(&p, None, true, calls, session, |mut store| async move {
                let instance = match instance {
                    Some(i) => i,
                    None => match pre.instantiate_async(&mut store).await {
                        Ok(i) => i,
                        Err(e) => return (store, Err(e)),
                    },
                };
                let (store, answers) = classify_each(store, &instance, &inputs, ticks).await;
                (store, answers.map(|a| Ok((a, instance))))
            })
            .await;
        let (answers, instance) = output?;
        if let Some(session) = session {
            let calls = done + u64::from(calls);
            self.inner
                .warm
                .put(Warm::new(p.clone(), account_id, session, instance, calls));
        }
        let latency_ms = started.elapsed().as_millis() as u64 / u64::from(calls);
        Ok(answers
            .into_iter()
            .map(|answer| answer.and_then(|v| check_verdict(v, &metadata_model, latency_ms)))
            .collect())
    }

    /// Loaded classifiers of `kind` with their metadata, sorted by id.
    pub(crate) fn classifiers_of(&self, kind: PluginKind) -> Vec<ClassifierInfo> {
        self.list()
            .into_iter()
            .filter(|p| p.kind == kind)
            .filter_map(|p| match p.metadata {
                Some(PluginMetadata::ReplyClassifier(m) | PluginMetadata::DomainClassifier(m)) => {
                    Some(ClassifierInfo {
                        id: p.id,
                        name: m.name,
                        model: m.model,
                        description: m.description,
                        uses_ai: m.uses_ai,
                        example: p.example,
                        source: p.source,
                    })
                }
                _ => None,
            })
            .collect()
    }

    /// One loaded classifier of `kind`, when `plugin_id` is one.
    pub(crate) fn classifier_of(
        &self,
        kind: PluginKind,
        plugin_id: &str,
    ) -> Option<ClassifierInfo> {
        self.classifiers_of(kind)
            .into_iter()
            .find(|c| c.id == plugin_id)
    }

    /// Loaded reply classifiers with their metadata, sorted by id.
    pub fn reply_classifiers(&self) -> Vec<ReplyClassifierInfo> {
        self.classifiers_of(PluginKind::ReplyClassifier)
    }

    /// One loaded reply classifier, when `plugin_id` is one.
    pub fn reply_classifier(&self, plugin_id: &str) -> Option<ReplyClassifierInfo> {
        self.classifier_of(PluginKind::ReplyClassifier, plugin_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wit_verdict(label: &str, confidence: f64, model: &str) -> wit::ReplyVerdict {
        wit::ReplyVerdict {
            label: label.into(),
            confidence,
            model: model.into(),
        }
    }

    #[test]
    fn verdicts_are_checked() {
        let v = check_verdict(wit_verdict("ooo", 1.7, " gpt "), "m", 3).unwrap();
        assert_eq!(
            (v.label.as_str(), v.confidence, v.model.as_str()),
            ("ooo", 1.0, "gpt")
        );
        let v = check_verdict(wit_verdict("other", -0.2, ""), "rules-v1", 3).unwrap();
        assert_eq!((v.confidence, v.model.as_str()), (0.0, "rules-v1"));
        for bad in ["Interested", "maybe", "", "ooo "] {
            let e = check_verdict(wit_verdict(bad, 0.5, "m"), "m", 0).unwrap_err();
            assert!(
                matches!(&e, CallError::InvalidOutput(m) if m.contains("is not one of interested, not_now")),
                "{e}"
            );
        }
        for bad in [f64::NAN, f64::INFINITY] {
            assert!(matches!(
                check_verdict(wit_verdict("ooo", bad, "m"), "m", 0),
                Err(CallError::InvalidOutput(_))
            ));
        }
    }
}
