//! [`SemanticPromoter`]: sources → gate → deduplication → concept → recurring elements →
//! relationships → cross-layer edges.
//!
//! A scan asks every source for its candidates (a failing source is reported and skipped),
//! rejects those below the configured minimums, passes the rest through the
//! [`RandomnessGate`], and promotes each admitted candidate:
//!
//! 1. **Resolve.** A pattern promoted before goes to the concept it became. A new one is first
//!    compared with the store's concepts through
//!    [`similar_concepts`](ConceptStore::similar_concepts): a concept at least
//!    [`dedup_threshold`](PromoterConfig::dedup_threshold) similar is taken as the pattern
//!    (reinforced, not duplicated); otherwise
//!    [`find_or_create_concept`](ConceptStore::find_or_create_concept) finds it by name or
//!    creates it, with the first source episode.
//! 2. **Reinforce.** Each source episode not yet credited to the concept reinforces it once;
//!    new evidence without new episodes (more observations, or a first link to an existing
//!    concept) reinforces it once. Evidence already credited is never credited again.
//! 3. **Provenance.** Episodic consolidation for causal patterns, agent inference for
//!    statistical ones, hybrid once both kinds support the same concept. Every
//!    [`ConceptSpec`] carries it; when an existing concept turns hybrid, its first
//!    reinforcement goes through `find_or_create_concept` by the concept's known name with a
//!    source episode (the contract's reinforcing lookup), so the store can merge it.
//! 4. **Recurring elements.** With an [`EpisodeReader`], the objects, tools, goals and outcome
//!    shared by the concept's credited episodes become its properties, rewritten only when
//!    new episodes are credited and only when a value changes.
//! 5. **Relationships.** A causal pattern relates its event concept to its outcome concept by
//!    CAUSES, again each time its observations grow.
//! 6. **Cross-layer edges.** DERIVED_FROM concept → each source episode (weight: the
//!    confidence), STATISTICALLY_CONFIRMS from the pattern's angular-gyrus record, and
//!    TEMPORALLY_CORRELATES concept → itself when the phase coherence exceeds the threshold.
//!    An edge is added only when it is missing or weaker, so edges never stack.
//!
//! What was credited is kept in the promoter's [`Ledger`] (the contracts give no way to read
//! it back from the stores), which [`save`](SemanticPromoter::save) persists and a promoter
//! opened on a directory ([`PromoterBuilder::open`]) journals change by change.

use std::path::Path;
use std::sync::Arc;

use maxim_core::journal::{StoreDir, SyncPolicy};
use maxim_core::ownership::FileClaims;
use maxim_core::{
    ConceptProvenance, ConceptSpec, ConceptStore, CrossEdgeKind, CrossLinks, LayerKind, LayerRecord,
    PromotionCandidate, PromotionCandidateRef, PromotionSource, RandomnessGate, RecordId, SharedClock,
    SystemClock,
};

use crate::config::PromoterConfig;
use crate::episodes::{EpisodeReader, recurring};
use crate::error::{Error, Result};
use crate::ledger::{Ledger, Op};
use crate::pattern::{
    Analysed, CAUSES, EVENT_CATEGORY, OUTCOME_CATEGORY, PatternKind, analyse, provenance_of_bits,
};
use crate::report::{Failure, Matched, Promotion, PromotionReport, RejectedBy, Rejection, Stage};

/// Builds a [`SemanticPromoter`].
///
/// ```
/// use promoter::{PromoterConfig, SemanticPromoter};
/// // The gate is on by default, so a promoter without one must say so.
/// assert!(SemanticPromoter::builder().build().is_err());
/// let mut config = PromoterConfig::default();
/// config.gate_enabled = false;
/// let promoter = SemanticPromoter::builder().config(config).build()?;
/// assert_eq!(promoter.source_count(), 0);
/// # Ok::<(), promoter::Error>(())
/// ```
#[derive(Clone, Default)]
pub struct PromoterBuilder {
    config: PromoterConfig,
    clock: Option<SharedClock>,
    gate: Option<Arc<dyn RandomnessGate>>,
    sources: Vec<Arc<dyn PromotionSource>>,
    reader: Option<Arc<dyn EpisodeReader>>,
    sync_policy: SyncPolicy,
}

impl std::fmt::Debug for PromoterBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromoterBuilder")
            .field("config", &self.config)
            .field("gate", &self.gate.is_some())
            .field("sources", &self.sources.iter().map(|s| s.source_name().to_owned()).collect::<Vec<_>>())
            .field("reader", &self.reader.is_some())
            .finish_non_exhaustive()
    }
}

impl PromoterBuilder {
    /// The settings (default [`PromoterConfig::default`]).
    pub fn config(&mut self, config: PromoterConfig) -> &mut Self {
        self.config = config;
        self
    }

    /// The clock (default the system clock); it stamps the ledger's entries.
    pub fn clock(&mut self, clock: SharedClock) -> &mut Self {
        self.clock = Some(clock);
        self
    }

    /// The randomness gate (required while [`PromoterConfig::gate_enabled`]).
    pub fn gate(&mut self, gate: Arc<dyn RandomnessGate>) -> &mut Self {
        self.gate = Some(gate);
        self
    }

    /// Registers a source; scans ask sources in registration order.
    pub fn source(&mut self, source: Arc<dyn PromotionSource>) -> &mut Self {
        self.sources.push(source);
        self
    }

    /// The reader of source episodes, for their recurring elements (default: none, and no
    /// properties are written).
    pub fn episode_reader(&mut self, reader: Arc<dyn EpisodeReader>) -> &mut Self {
        self.reader = Some(reader);
        self
    }

    /// When the journal of a promoter opened on a directory reaches stable storage (default
    /// [`SyncPolicy::default`], a group commit once a second).
    pub fn sync_policy(&mut self, policy: SyncPolicy) -> &mut Self {
        self.sync_policy = policy;
        self
    }

    /// The promoter opened on the directory `dir` (created if missing): the ledger's snapshot
    /// `promoter.snap` (or its backup) loaded and its journal replayed, every later change of
    /// the ledger journaled before it is applied. Errors: the settings, another open promoter
    /// holding the directory ([`maxim_core::Error::Locked`]), or damage the snapshot's backup
    /// does not cover. See [`journal`](crate::journal).
    pub fn open(&self, dir: impl AsRef<Path>) -> Result<SemanticPromoter> {
        self.build()?.open_dir(dir.as_ref(), self.sync_policy)
    }

    /// The promoter in memory, once the settings are checked. Errors: a setting out of range,
    /// [`Error::NoGate`].
    pub fn build(&self) -> Result<SemanticPromoter> {
        self.config.validate()?;
        if self.config.gate_enabled && self.gate.is_none() {
            return Err(Error::NoGate);
        }
        Ok(SemanticPromoter {
            config: self.config.clone(),
            clock: self.clock.clone().unwrap_or_else(SystemClock::shared),
            gate: self.gate.clone(),
            sources: self.sources.clone(),
            reader: self.reader.clone(),
            ledger: Ledger::default(),
            counters: Counters::default(),
            claims: FileClaims::new(),
            journal: None,
            loaded_journal_seq: 0,
        })
    }
}

/// Running totals, for [`SemanticPromoter::stats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counters {
    pub(crate) scans: u64,
    pub(crate) candidates: u64,
    pub(crate) promoted: u64,
    pub(crate) reinforced: u64,
    pub(crate) unchanged: u64,
    pub(crate) rejected_threshold: u64,
    pub(crate) rejected_gate: u64,
    pub(crate) failed: u64,
    pub(crate) edges_added: u64,
}

impl Counters {
    pub(crate) const NAMES: [&'static str; 9] = [
        "scans",
        "candidates",
        "promoted",
        "reinforced",
        "unchanged",
        "rejected_threshold",
        "rejected_gate",
        "failed",
        "edges_added",
    ];

    pub(crate) fn to_array(self) -> [u64; 9] {
        [
            self.scans,
            self.candidates,
            self.promoted,
            self.reinforced,
            self.unchanged,
            self.rejected_threshold,
            self.rejected_gate,
            self.failed,
            self.edges_added,
        ]
    }

    pub(crate) fn set(&mut self, name: &str, value: u64) {
        let slot = match name {
            "scans" => &mut self.scans,
            "candidates" => &mut self.candidates,
            "promoted" => &mut self.promoted,
            "reinforced" => &mut self.reinforced,
            "unchanged" => &mut self.unchanged,
            "rejected_threshold" => &mut self.rejected_threshold,
            "rejected_gate" => &mut self.rejected_gate,
            "failed" => &mut self.failed,
            "edges_added" => &mut self.edges_added,
            _ => return,
        };
        *slot = value;
    }

    fn count(&mut self, report: &PromotionReport) {
        self.scans += 1;
        self.candidates += report.candidates as u64;
        self.promoted += report.promoted.len() as u64;
        self.reinforced += report.reinforced.len() as u64;
        self.unchanged += report.unchanged.len() as u64;
        self.rejected_threshold += report.rejected_by(RejectedBy::Threshold).count() as u64;
        self.rejected_gate += report.rejected_by(RejectedBy::Gate).count() as u64;
        self.failed += report.failed.len() as u64;
        let all = report.promoted.iter().chain(&report.reinforced).chain(&report.unchanged);
        self.edges_added += all.map(|p| u64::from(p.edges_added)).sum::<u64>();
    }
}

/// The promoter's counters and the ledger's size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromoterStats {
    /// Named running totals: `scans`, `candidates`, `promoted`, `reinforced`, `unchanged`,
    /// `rejected_threshold`, `rejected_gate`, `failed`, `edges_added`.
    pub counters: std::collections::BTreeMap<&'static str, u64>,
    /// Patterns in the ledger.
    pub patterns: usize,
    /// Concepts in the ledger.
    pub concepts: usize,
}

/// Promotes repeated patterns into concepts (see the [module docs](self)).
pub struct SemanticPromoter {
    pub(crate) config: PromoterConfig,
    pub(crate) clock: SharedClock,
    gate: Option<Arc<dyn RandomnessGate>>,
    sources: Vec<Arc<dyn PromotionSource>>,
    reader: Option<Arc<dyn EpisodeReader>>,
    pub(crate) ledger: Ledger,
    pub(crate) counters: Counters,
    pub(crate) claims: FileClaims,
    /// The directory and journal, when opened on one.
    pub(crate) journal: Option<StoreDir<Op>>,
    /// The journal sequence number the last loaded snapshot recorded.
    pub(crate) loaded_journal_seq: u64,
}

impl std::fmt::Debug for SemanticPromoter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SemanticPromoter")
            .field("config", &self.config)
            .field("sources", &self.sources.len())
            .field("gate", &self.gate.is_some())
            .field("reader", &self.reader.is_some())
            .field("patterns", &self.ledger.pattern_count())
            .field("journaled", &self.journal.is_some())
            .finish_non_exhaustive()
    }
}

/// An outgoing cross-layer edge: target, kind, weight.
type OutEdge = (LayerRecord, CrossEdgeKind, f64);

/// What one candidate's steps share.
struct Step<'s, 'v, 'c> {
    source: &'s str,
    candidate: &'v PromotionCandidateRef<'c>,
    a: Analysed<'c>,
}

impl SemanticPromoter {
    /// A builder with the default settings.
    pub fn builder() -> PromoterBuilder {
        PromoterBuilder::default()
    }

    /// The settings.
    pub fn config(&self) -> &PromoterConfig {
        &self.config
    }

    /// Registers a source after building.
    pub fn add_source(&mut self, source: Arc<dyn PromotionSource>) {
        self.sources.push(source);
    }

    /// Number of registered sources.
    pub fn source_count(&self) -> usize {
        self.sources.len()
    }

    /// What the promoter has credited so far.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// The concept the pattern `name` of `category` was promoted into.
    pub fn concept_of(&self, category: &str, name: &str) -> Option<RecordId> {
        self.ledger.pattern(&format!("{}\u{1f}{}", category.trim(), name.trim())).map(|p| p.concept)
    }

    /// The provenance of concept `id` as the promoter knows it.
    pub fn provenance_of(&self, id: RecordId) -> Option<ConceptProvenance> {
        self.ledger.concept(id).map(|c| provenance_of_bits(c.evidence))
    }

    /// Forgets concept `id` and the patterns promoted into it (wire it to the concept store's
    /// deletion callback); the next scan promotes those patterns afresh. Returns whether the
    /// concept was known. Errors: the journal refused the write (nothing changed).
    pub fn forget_concept(&mut self, id: RecordId) -> Result<bool> {
        let _s = tracing::debug_span!("promoter_forget_concept", %id).entered();
        if self.ledger.concept(id).is_none() {
            return Ok(false);
        }
        self.record(Op::ForgetConcept { concept: id })?;
        Ok(true)
    }

    /// Forgets that episode `id` was credited to any concept (wire it to the episodic layer's
    /// deletion callback), so no trace of a deleted episode stays in the ledger. Returns
    /// whether any concept had it. Errors: the journal refused the write (nothing changed).
    pub fn forget_episode(&mut self, id: RecordId) -> Result<bool> {
        let _s = tracing::debug_span!("promoter_forget_episode", %id).entered();
        if !self.ledger.concepts().iter().any(|(_, c)| c.is_credited(id)) {
            return Ok(false);
        }
        self.record(Op::ForgetEpisode { episode: id })?;
        Ok(true)
    }

    /// The running totals and the ledger's size.
    pub fn stats(&self) -> PromoterStats {
        PromoterStats {
            counters: Counters::NAMES.into_iter().zip(self.counters.to_array()).collect(),
            patterns: self.ledger.pattern_count(),
            concepts: self.ledger.concept_count(),
        }
    }

    /// Scans the registered sources and promotes what qualifies into `concepts`, with
    /// cross-layer edges in `links`, reading episodes through the registered reader.
    pub fn scan<C, L>(&mut self, concepts: &mut C, links: &mut L) -> PromotionReport
    where
        C: ConceptStore + ?Sized,
        L: CrossLinks + ?Sized,
    {
        self.scan_with(&[], None, concepts, links)
    }

    /// [`scan`](Self::scan) with `extra` sources asked after the registered ones, and `reader`
    /// in place of the registered reader when given (for a caller that owns the sources and
    /// the episodic layer and lends them for the scan).
    pub fn scan_with<C, L>(
        &mut self,
        extra: &[&dyn PromotionSource],
        reader: Option<&dyn EpisodeReader>,
        concepts: &mut C,
        links: &mut L,
    ) -> PromotionReport
    where
        C: ConceptStore + ?Sized,
        L: CrossLinks + ?Sized,
    {
        let _s =
            tracing::debug_span!("promoter_scan", n_sources = self.sources.len() + extra.len()).entered();
        let registered = self.sources.clone();
        let registered_reader = self.reader.clone();
        let reader = reader.or(registered_reader.as_deref());
        let sources = registered.iter().map(|s| &**s as &dyn PromotionSource).chain(extra.iter().copied());
        let mut report = PromotionReport::default();
        for source in sources {
            let name = source.source_name();
            // The source lends its candidates borrowed; each is promoted as it comes.
            let (min_confidence, min_observations) =
                (self.config.min_confidence, self.config.min_observations);
            let lent = source.for_each_candidate(min_confidence, min_observations, &mut |candidate| {
                self.promote_view(name, candidate, reader, concepts, links, &mut report);
            });
            match lent {
                Ok(n) => {
                    tracing::debug!(source = name, n_candidates = n, "candidates promoted");
                }
                Err(err) => {
                    tracing::warn!(source = name, error = %err, "promotion source failed; skipped");
                    report.failed.push(Failure {
                        source: name.to_owned(),
                        pattern: None,
                        stage: Stage::Source,
                        error: err.to_string(),
                    });
                }
            }
        }
        self.counters.count(&report);
        tracing::debug!(
            n_promoted = report.promoted.len(),
            n_reinforced = report.reinforced.len(),
            n_rejected = report.rejected.len(),
            n_failed = report.failed.len(),
            "scan done"
        );
        report
    }

    /// Promotes `candidates` gathered elsewhere (as from a source named `source`), as a scan
    /// does with each source's list.
    pub fn promote_candidates<C, L>(
        &mut self,
        source: &str,
        candidates: &[PromotionCandidate],
        concepts: &mut C,
        links: &mut L,
    ) -> PromotionReport
    where
        C: ConceptStore + ?Sized,
        L: CrossLinks + ?Sized,
    {
        let _s = tracing::debug_span!("promoter_promote", n_candidates = candidates.len()).entered();
        let reader = self.reader.clone();
        let mut report = PromotionReport::default();
        self.promote_all(source, candidates, reader.as_deref(), concepts, links, &mut report);
        self.counters.count(&report);
        report
    }

    fn promote_all<C, L>(
        &mut self,
        source: &str,
        candidates: &[PromotionCandidate],
        reader: Option<&dyn EpisodeReader>,
        concepts: &mut C,
        links: &mut L,
        report: &mut PromotionReport,
    ) where
        C: ConceptStore + ?Sized,
        L: CrossLinks + ?Sized,
    {
        for candidate in candidates {
            self.promote_view(source, &candidate.as_view(), reader, concepts, links, report);
        }
    }

    /// Counts, checks, screens and promotes one candidate.
    fn promote_view<C, L>(
        &mut self,
        source: &str,
        candidate: &PromotionCandidateRef<'_>,
        reader: Option<&dyn EpisodeReader>,
        concepts: &mut C,
        links: &mut L,
        report: &mut PromotionReport,
    ) where
        C: ConceptStore + ?Sized,
        L: CrossLinks + ?Sized,
    {
        report.candidates += 1;
        let a = match analyse(candidate) {
            Ok(a) => a,
            Err(err) => {
                report.failed.push(Failure {
                    source: source.to_owned(),
                    pattern: Some(candidate.pattern_name.to_owned()),
                    stage: Stage::Validate,
                    error: err.to_string(),
                });
                return;
            }
        };
        if let Some(rejection) = self.screen(source, candidate) {
            report.rejected.push(rejection);
            return;
        }
        let step = Step { source, candidate, a };
        self.promote_one(&step, reader, concepts, links, report);
    }

    /// The thresholds, then the gate.
    fn screen(&self, source: &str, c: &PromotionCandidateRef<'_>) -> Option<Rejection> {
        let reject = |by, reason: String| {
            Some(Rejection { source: source.to_owned(), pattern: c.pattern_name.to_owned(), by, reason })
        };
        if c.confidence < self.config.min_confidence {
            return reject(
                RejectedBy::Threshold,
                format!("confidence {} below the minimum {}", c.confidence, self.config.min_confidence),
            );
        }
        if c.observations < self.config.min_observations {
            return reject(
                RejectedBy::Threshold,
                format!(
                    "{} observations, fewer than the minimum {}",
                    c.observations, self.config.min_observations
                ),
            );
        }
        if self.config.gate_enabled
            && let Some(gate) = &self.gate
        {
            let decision = gate.admits_view(c);
            if !decision.admitted {
                return reject(RejectedBy::Gate, decision.reason);
            }
        }
        None
    }

    fn promote_one<C, L>(
        &mut self,
        step: &Step<'_, '_, '_>,
        reader: Option<&dyn EpisodeReader>,
        concepts: &mut C,
        links: &mut L,
        report: &mut PromotionReport,
    ) where
        C: ConceptStore + ?Sized,
        L: CrossLinks + ?Sized,
    {
        let Step { source, candidate: c, a } = step;
        let fail = |report: &mut PromotionReport, stage: Stage, error: String| {
            report.failed.push(Failure {
                source: (*source).to_owned(),
                pattern: Some(a.name.to_owned()),
                stage,
                error,
            });
        };
        let now = self.clock.now();
        let trust = c.source.default_trust().get();

        // 1. Resolve: the ledger, then similarity, then the store's find-or-create.
        let previous = self.ledger.pattern(&a.key).cloned();
        let (concept, matched, credited_by_find) = if let Some(p) = &previous {
            (p.concept, Matched::Known, None)
        } else {
            let definition = crate::pattern::definition_of_view(c);
            let text = format!("{}. {definition}", a.name);
            let best = concepts
                .similar_concepts(&text, self.config.dedup_candidates)
                .into_iter()
                .filter(|(_, s)| s.is_finite())
                .max_by(|x, y| x.1.total_cmp(&y.1));
            match best {
                Some((id, score)) if score >= self.config.dedup_threshold => {
                    (id, Matched::Similar { score }, None)
                }
                _ => {
                    let prior = provenance_of_bits(a.bits);
                    let spec = ConceptSpec {
                        name: a.name.to_owned(),
                        category: a.category.to_owned(),
                        definition,
                        provenance: prior,
                        source_episode: a.episodes.first().copied(),
                        source: c.source.clone(),
                        trust,
                    };
                    match concepts.find_or_create_concept(&spec) {
                        Ok((id, true)) => (id, Matched::Created, spec.source_episode),
                        Ok((id, false)) => (id, Matched::Found, spec.source_episode),
                        Err(err) => return fail(report, Stage::Resolve, err.to_string()),
                    }
                }
            }
        };
        let prior_bits = self.ledger.concept(concept).map_or(0, |e| e.evidence);
        let bits = prior_bits | a.bits;
        let provenance = provenance_of_bits(bits);
        if previous.is_none() || bits != prior_bits {
            let known_as = (previous.is_none() && matches!(matched, Matched::Created | Matched::Found))
                .then(|| (a.name.to_owned(), a.category.to_owned()));
            let bind = Op::Bind {
                pattern: a.key.clone(),
                concept,
                kind: a.kind,
                evidence: a.bits,
                known_as,
                at: now,
            };
            if let Err(err) = self.record(bind) {
                return fail(report, Stage::Journal, err.to_string());
            }
        }
        if let Some(episode) = credited_by_find
            && let Err(err) = self.record(Op::Credit { concept, episode })
        {
            return fail(report, Stage::Journal, err.to_string());
        }
        let mut out = Promotion {
            source: (*source).to_owned(),
            pattern: a.name.to_owned(),
            category: a.category.to_owned(),
            concept,
            matched,
            provenance,
            reinforcements: u32::from(matches!(matched, Matched::Found) && credited_by_find.is_some()),
            properties_written: 0,
            relationships: 0,
            edges_added: 0,
        };

        // 2-3. Reinforce with the new evidence, merging the provenance when it changed.
        // The most observations ever credited: a source that forgot some and learns them
        // again brings no new evidence until it passes that count.
        let observations = previous.as_ref().map_or(c.observations, |p| p.observations.max(c.observations));
        let turned = prior_bits != 0 && provenance_of_bits(prior_bits) != provenance;
        let mut merge_pending = turned;
        let new_episodes: Vec<RecordId> = {
            let entry = self.ledger.concept(concept);
            a.episodes.iter().copied().filter(|&e| !entry.is_some_and(|x| x.is_credited(e))).collect()
        };
        for episode in new_episodes {
            let result = if merge_pending {
                merge_pending = false;
                self.merge_provenance(concept, provenance, episode, concepts, c, trust)
            } else {
                concepts.reinforce_concept(concept, Some(episode)).map_err(|e| e.to_string())
            };
            if let Err(err) = result {
                return fail(report, Stage::Reinforce, err);
            }
            if let Err(err) = self.record(Op::Credit { concept, episode }) {
                return fail(report, Stage::Journal, err.to_string());
            }
            out.reinforcements += 1;
        }
        let grew = match &previous {
            Some(p) => c.observations > p.observations,
            None => {
                matches!(matched, Matched::Similar { .. })
                    || (matched == Matched::Found && credited_by_find.is_none())
            }
        };
        if out.reinforcements == 0 && grew {
            let last = self.ledger.concept(concept).and_then(|e| e.episodes.last().copied());
            let result = match last {
                Some(episode) if merge_pending => {
                    self.merge_provenance(concept, provenance, episode, concepts, c, trust)
                }
                _ => concepts.reinforce_concept(concept, None).map_err(|e| e.to_string()),
            };
            if let Err(err) = result {
                return fail(report, Stage::Reinforce, err);
            }
            out.reinforcements += 1;
        }
        if previous.as_ref().is_none_or(|p| p.observations != observations || p.confidence != c.confidence) {
            let evidence =
                Op::Evidence { pattern: a.key.clone(), observations, confidence: c.confidence, at: now };
            if let Err(err) = self.record(evidence) {
                return fail(report, Stage::Journal, err.to_string());
            }
        }

        // 4. Recurring elements of the credited episodes.
        if let Some(reader) = reader {
            match self.write_recurring(concept, reader, concepts, c, trust) {
                Ok(n) => out.properties_written = n,
                Err(err) => return fail(report, Stage::Properties, err),
            }
        }

        // 5. CAUSES between the event and the outcome.
        if self.config.form_relationships && a.kind == PatternKind::Causal {
            let due = previous.as_ref().and_then(|p| p.related_at).is_none_or(|r| observations > r);
            if let (true, Some(event), Some(outcome)) = (due, a.event, a.outcome) {
                match Self::relate(event, outcome, concepts, c, trust) {
                    Ok(n) => {
                        if let Err(err) = self.record(Op::Related { pattern: a.key.clone(), observations }) {
                            return fail(report, Stage::Journal, err.to_string());
                        }
                        out.relationships = n;
                    }
                    Err(err) => return fail(report, Stage::Relationships, err),
                }
            }
        }

        // 6. Cross-layer edges, never stacked.
        match self.link(concept, a, c.confidence, links) {
            Ok(n) => out.edges_added = n,
            Err(err) => return fail(report, Stage::Edges, err),
        }

        match out.matched {
            Matched::Created => report.promoted.push(out),
            _ if out.reinforcements > 0 => report.reinforced.push(out),
            _ => report.unchanged.push(out),
        }
    }

    /// Reinforces `concept` with `episode` through the store's reinforcing lookup by its known
    /// name, carrying the new `provenance`; falls back to a plain reinforcement when the name
    /// is not known. A lookup that lands on another concept is an error.
    fn merge_provenance<C: ConceptStore + ?Sized>(
        &self,
        concept: RecordId,
        provenance: ConceptProvenance,
        episode: RecordId,
        concepts: &mut C,
        c: &PromotionCandidateRef<'_>,
        trust: f64,
    ) -> Result<(), String> {
        let Some((name, category)) = self.ledger.concept(concept).and_then(|e| e.known_as.clone()) else {
            return concepts.reinforce_concept(concept, Some(episode)).map_err(|e| e.to_string());
        };
        let spec = ConceptSpec {
            name,
            category,
            definition: String::new(),
            provenance,
            source_episode: Some(episode),
            source: c.source.clone(),
            trust,
        };
        match concepts.find_or_create_concept(&spec) {
            Ok((id, _)) if id == concept => Ok(()),
            Ok((id, _)) => {
                Err(format!("the store resolved the name {:?} to concept {id}, not {concept}", spec.name))
            }
            Err(err) => Err(err.to_string()),
        }
    }

    /// Writes the recurring elements of the concept's newest credited episodes, when episodes
    /// were credited since the last time; only changed values are written. Returns how many.
    fn write_recurring<C: ConceptStore + ?Sized>(
        &mut self,
        concept: RecordId,
        reader: &dyn EpisodeReader,
        concepts: &mut C,
        c: &PromotionCandidateRef<'_>,
        trust: f64,
    ) -> Result<u32, String> {
        let Some(entry) = self.ledger.concept(concept) else { return Ok(0) };
        if entry.credits == 0 || entry.extracted_at == Some(entry.credits) {
            return Ok(0);
        }
        let n = entry.episodes.len();
        let newest = &entry.episodes[n.saturating_sub(self.config.max_episodes_read)..];
        let read: Vec<_> = newest.iter().filter_map(|&id| reader.read_episode(id)).collect();
        let found = recurring(
            &read,
            self.config.recurrence_share,
            self.config.min_recurrence,
            self.config.max_elements,
        );
        let changed: Vec<(&'static str, maxim_core::Value)> = found
            .properties()
            .into_iter()
            .filter(|(key, value)| entry.property(key) != Some(value))
            .collect();
        let mut written = 0;
        for (key, value) in changed {
            concepts
                .set_concept_property(concept, key, value.clone(), c.source, trust)
                .map_err(|e| e.to_string())?;
            self.record(Op::Property { concept, key: key.to_owned(), value }).map_err(|e| e.to_string())?;
            written += 1;
        }
        self.record(Op::Extracted { concept }).map_err(|e| e.to_string())?;
        Ok(written)
    }

    /// Finds or creates the event and outcome concepts and relates them by CAUSES. Returns
    /// how many relationships were formed (0 when both name the same concept).
    fn relate<C: ConceptStore + ?Sized>(
        event: &str,
        outcome: &str,
        concepts: &mut C,
        c: &PromotionCandidateRef<'_>,
        trust: f64,
    ) -> Result<u32, String> {
        let endpoint = |name: &str, category: &str, what: &str| ConceptSpec {
            name: name.to_owned(),
            category: category.to_owned(),
            definition: format!("The {what} {name}"),
            provenance: ConceptProvenance::EpisodicConsolidation,
            source_episode: None,
            source: c.source.clone(),
            trust,
        };
        let (event_id, _) = concepts
            .find_or_create_concept(&endpoint(event, EVENT_CATEGORY, "event"))
            .map_err(|e| e.to_string())?;
        let (outcome_id, _) = concepts
            .find_or_create_concept(&endpoint(outcome, OUTCOME_CATEGORY, "outcome"))
            .map_err(|e| e.to_string())?;
        if event_id == outcome_id {
            return Ok(0);
        }
        concepts
            .relate_concepts(event_id, outcome_id, CAUSES, c.confidence, c.confidence)
            .map_err(|e| e.to_string())?;
        Ok(1)
    }

    /// Adds the missing or weaker cross-layer edges; returns how many were written.
    fn link<L: CrossLinks + ?Sized>(
        &self,
        concept: RecordId,
        a: &Analysed<'_>,
        confidence: f64,
        links: &mut L,
    ) -> Result<u32, String> {
        let atl = LayerRecord::new(LayerKind::Atl, concept);
        let mut wanted: Vec<(LayerRecord, LayerRecord, CrossEdgeKind, f64)> = a
            .episodes
            .iter()
            .map(|&e| {
                (atl, LayerRecord::new(LayerKind::Hippocampus, e), CrossEdgeKind::DerivedFrom, confidence)
            })
            .collect();
        if let Some(coherence) = a.phase_coherence.filter(|&p| p > self.config.phase_coherence_threshold) {
            wanted.push((atl, atl, CrossEdgeKind::TemporallyCorrelates, coherence));
        }
        if let Some(ag) = a.ag_record {
            let ag = LayerRecord::new(LayerKind::AngularGyrus, ag);
            wanted.push((ag, atl, CrossEdgeKind::StatisticallyConfirms, confidence));
        }
        // The edges already there, per source record, sorted for binary search.
        let mut existing: Vec<(LayerRecord, Vec<OutEdge>)> = Vec::with_capacity(2);
        let mut added = 0;
        for (from, to, kind, weight) in wanted {
            let at = if let Some(i) = existing.iter().position(|(f, _)| *f == from) {
                i
            } else {
                let mut edges = links.cross_edges_from(from);
                edges.sort_unstable_by_key(|e| (e.0, e.1));
                existing.push((from, edges));
                existing.len() - 1
            };
            let edges = &mut existing[at].1;
            match edges.binary_search_by(|e| (e.0, e.1).cmp(&(to, kind))) {
                Ok(i) if edges[i].2 >= weight => continue,
                Ok(i) => {
                    links.add_cross_edge(from, to, kind, weight).map_err(|e| e.to_string())?;
                    edges[i].2 = weight;
                }
                Err(i) => {
                    links.add_cross_edge(from, to, kind, weight).map_err(|e| e.to_string())?;
                    edges.insert(i, (to, kind, weight));
                }
            }
            added += 1;
        }
        Ok(added)
    }

    /// Saves the ledger to `path` (see [`persist`](crate::persist)).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        self.save_to_path(path.as_ref())
    }

    /// Replaces the ledger with the one saved at `path`, all or nothing.
    pub fn load(&mut self, path: impl AsRef<Path>) -> Result<()> {
        self.load_from_path(path.as_ref())
    }
}
