//! Bad input gives typed errors and changes nothing.

use atl::{Atl, AtlConfig, Concept, EdgeUpdate, Error, spec};
use maxim_core::{MemoryLayer, RecordId, Source};

use crate::common::{fingerprint, layer};

/// A layer with a few concepts, relationships and claims.
fn populated() -> (Atl, [RecordId; 3]) {
    let (_clock, mut atl) = layer();
    let ids = ["mug", "cup", "kitchen"].map(|n| atl.find_or_create(&spec(n, "object")).unwrap().id);
    atl.define_relationship(ids[0], ids[1], "RELATED_TO", 0.5, 0.5).unwrap();
    atl.define_relationship(ids[0], ids[2], "CAUSES", 0.5, 0.5).unwrap();
    atl.set_property(ids[0], "color", "blue", Source::UserStated, 1.0).unwrap();
    (atl, ids)
}

fn unchanged(atl: &mut Atl, what: &str, call: impl FnOnce(&mut Atl) -> bool) {
    let before = fingerprint(atl);
    assert!(call(atl), "{what}: the expected error");
    assert_eq!(fingerprint(atl), before, "{what}: nothing may change");
}

#[test]
fn empty_and_whitespace_names() {
    let (mut atl, ids) = populated();
    for name in ["", "   ", "\t\n", "?!", "___"] {
        unchanged(&mut atl, name, |a| {
            matches!(a.find_or_create(&spec(name, "object")), Err(Error::EmptyName { field: "name", .. }))
        });
    }
    unchanged(&mut atl, "empty concept", |a| {
        let mut c = Concept::new(RecordId::from_u128(99), "x", "object", a.now()).unwrap();
        c.name = " ".into();
        matches!(a.store(c.into()), Err(Error::EmptyName { .. }))
    });
    unchanged(&mut atl, "empty property key", |a| {
        matches!(a.set_property(ids[0], "  ", "x", Source::UserStated, 1.0), Err(Error::EmptyName { .. }))
    });
    assert!(atl.lookup("  ", "object").is_none());
}

#[test]
fn unknown_relationship_types() {
    let (mut atl, ids) = populated();
    for name in ["", "is_a", "IS-A", "LIKES"] {
        unchanged(&mut atl, name, |a| {
            matches!(
                a.define_relationship(ids[0], ids[1], name, 0.5, 0.5),
                Err(Error::UnknownRelationship { .. })
            )
        });
    }
    unchanged(&mut atl, "update", |a| {
        matches!(
            a.update_relationship(ids[0], ids[1], "LIKES", EdgeUpdate::default()),
            Err(Error::UnknownRelationship { .. })
        )
    });
    assert!(matches!(
        atl.find_relationships(ids[0], Some("LIKES"), atl::Direction::Both, 5),
        Err(Error::UnknownRelationship { .. })
    ));
}

#[test]
fn self_relationships() {
    let (mut atl, ids) = populated();
    let names: Vec<String> = atl.registry().iter().map(|t| t.name.clone()).collect();
    for name in names {
        unchanged(&mut atl, &name, |a| {
            matches!(
                a.define_relationship(ids[0], ids[0], &name, 0.5, 0.5),
                Err(Error::SelfRelationship { .. })
            )
        });
    }
}

#[test]
fn nan_and_out_of_range_numbers() {
    let (mut atl, ids) = populated();
    for (w, c) in
        [(f64::NAN, 0.5), (0.5, f64::NAN), (-0.1, 0.5), (1.5, 0.5), (0.5, 1.01), (f64::INFINITY, 0.5)]
    {
        unchanged(&mut atl, &format!("define {w} {c}"), |a| {
            matches!(
                a.define_relationship(ids[0], ids[1], "RELATED_TO", w, c),
                Err(Error::Core(maxim_core::Error::OutOfRange { .. }))
            )
        });
    }
    for update in [
        EdgeUpdate { weight: Some(f64::NAN), ..EdgeUpdate::default() },
        EdgeUpdate { confidence: Some(-1.0), ..EdgeUpdate::default() },
        EdgeUpdate { confidence_delta: Some(f64::NAN), ..EdgeUpdate::default() },
        EdgeUpdate { confidence_delta: Some(f64::NEG_INFINITY), ..EdgeUpdate::default() },
    ] {
        unchanged(&mut atl, &format!("{update:?}"), |a| {
            a.update_relationship(ids[0], ids[1], "RELATED_TO", update).is_err()
        });
    }
    unchanged(&mut atl, "trust NaN", |a| {
        let mut s = spec("new thing", "object");
        s.trust = f64::NAN;
        a.find_or_create(&s).is_err()
    });
    unchanged(&mut atl, "property trust", |a| {
        a.set_property(ids[0], "k", 1i64, Source::UserStated, 2.0).is_err()
    });
    unchanged(&mut atl, "stored confidence NaN", |a| {
        let mut c = a.new_concept("weird", "object").unwrap();
        c.confidence = f64::NAN;
        a.store(c.into()).is_err()
    });
    for bad in [f64::NAN, 0.0, 1.5] {
        let config = {
            let mut c = AtlConfig::default();
            c.name_similarity_threshold = bad;
            c
        };
        assert!(Atl::builder().config(config).build().is_err());
    }
}

#[test]
fn missing_relationship_ends_and_unknown_ids() {
    let (mut atl, ids) = populated();
    let ghost = RecordId::from_u128(0xdead);
    for (s, t) in [(ids[0], ghost), (ghost, ids[0]), (ghost, ghost)] {
        unchanged(
            &mut atl,
            "define",
            |a| matches!(a.define_relationship(s, t, "IS_A", 0.5, 0.5), Err(Error::Core(maxim_core::Error::NotFound { id })) if id == ghost),
        );
        unchanged(
            &mut atl,
            "remove",
            |a| matches!(a.remove_relationship(s, t, None), Err(e) if e.is_not_found()),
        );
        unchanged(&mut atl, "update", |a| {
            a.update_relationship(s, t, "IS_A", EdgeUpdate::default()).is_err()
        });
    }
    unchanged(&mut atl, "reinforce", |a| matches!(a.reinforce(ghost, None), Err(e) if e.is_not_found()));
    unchanged(&mut atl, "remove", |a| a.remove(ghost).is_err());
    unchanged(&mut atl, "get", |a| a.get(ghost).is_err());
    unchanged(
        &mut atl,
        "property",
        |a| matches!(a.set_property(ghost, "k", 1i64, Source::UserStated, 1.0), Err(e) if e.is_not_found()),
    );
    unchanged(&mut atl, "add_ref", |a| a.add_ref(ghost, maxim_core::LayerKind::Hippocampus, ids[0]).is_err());
    unchanged(&mut atl, "duplicate id", |a| {
        let mut c = a.new_concept("dup", "object").unwrap();
        c.meta.id = ids[1];
        matches!(a.store(c.into()), Err(e) if e.is_duplicate())
    });
    assert!(atl.find_relationships(ghost, None, atl::Direction::Both, 5).is_err());
    assert!(atl.recall_associated(&[ghost], 5).is_empty());
}
