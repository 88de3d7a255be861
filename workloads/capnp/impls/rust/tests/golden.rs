//! The three cases against the lab's golden values (conformance/golden.json, SPEC §3.5), through
//! the library's public API: the generator's first requests, their answers as the server code
//! computes them from the serialised request, and the SHA-256 of their canonical content
//! encoding, which covers every drawn value (texts, floats, enums).

// Test code: a failed unwrap is a failed assertion, with its message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use capnp::message;
use capnp_rust::carsales::CarSales;
use capnp_rust::carsales_capnp::{car, parking_lot, Color};
use capnp_rust::catrank::CatRank;
use capnp_rust::catrank_capnp::search_result_list;
use capnp_rust::eval::Eval;
use capnp_rust::eval_capnp::expression;
use capnp_rust::modes::Case;
use capnp_rust::rng::FastRand;
use serde_json::Value;
use sha2::{Digest, Sha256};

fn golden() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../conformance/golden.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn numbers(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_i64().unwrap())
        .collect()
}

/// Builds one request of case `C` and answers it with the server code, reading the request
/// back from its bytes as a server would; returns (request builder, expected, checked).
fn round_trip<C: Case>(
    rng: &mut FastRand,
) -> (message::Builder<message::HeapAllocator>, C::Expected) {
    let mut request = message::Builder::new_default();
    let expected = C::build_request(rng, request.init_root());
    let bytes = capnp::serialize::write_message_to_words(&request);
    let reader = capnp::serialize::read_message_from_flat_slice(
        &mut bytes.as_slice(),
        capnp_rust::stream::READER_OPTIONS,
    )
    .unwrap();
    let mut response = message::Builder::new_default();
    C::serve(reader.get_root().unwrap(), response.init_root()).unwrap();
    C::check(response.get_root_as_reader().unwrap(), expected).unwrap();
    (request, expected)
}

// ---- the canonical content encoding (SPEC §3.5) -----------------------------------------

fn text(out: &mut Vec<u8>, t: capnp::text::Reader<'_>) {
    out.extend((t.len() as u32).to_le_bytes());
    out.extend(t.as_bytes());
}

fn cce_car(out: &mut Vec<u8>, c: car::Reader<'_>) {
    text(out, c.get_make().unwrap());
    text(out, c.get_model().unwrap());
    out.extend((c.get_color().unwrap() as u16).to_le_bytes());
    out.extend([c.get_seats(), c.get_doors()]);
    let wheels = c.get_wheels().unwrap();
    out.extend(wheels.len().to_le_bytes());
    for w in wheels {
        out.extend(w.get_diameter().to_le_bytes());
        out.extend(w.get_air_pressure().to_bits().to_le_bytes());
        out.push(w.get_snow_tires().into());
    }
    out.extend(c.get_length().to_le_bytes());
    out.extend(c.get_width().to_le_bytes());
    out.extend(c.get_height().to_le_bytes());
    out.extend(c.get_weight().to_le_bytes());
    let e = c.get_engine().unwrap();
    out.extend(e.get_horsepower().to_le_bytes());
    out.push(e.get_cylinders());
    out.extend(e.get_cc().to_le_bytes());
    out.extend([u8::from(e.get_uses_gas()), u8::from(e.get_uses_electric())]);
    out.extend(c.get_fuel_capacity().to_bits().to_le_bytes());
    out.extend(c.get_fuel_level().to_bits().to_le_bytes());
    out.extend([
        u8::from(c.get_has_power_windows()),
        c.get_has_power_steering().into(),
        c.get_has_cruise_control().into(),
        c.get_cup_holders(),
        c.get_has_nav_system().into(),
    ]);
}

fn cce_side(out: &mut Vec<u8>, side: Result<i32, expression::Reader<'_>>) {
    match side {
        Ok(value) => {
            out.extend(0u16.to_le_bytes());
            out.extend(value.to_le_bytes());
        }
        Err(sub) => {
            out.extend(1u16.to_le_bytes());
            cce_expression(out, sub);
        }
    }
}

fn cce_expression(out: &mut Vec<u8>, e: expression::Reader<'_>) {
    out.extend((e.get_op().unwrap() as u16).to_le_bytes());
    cce_side(
        out,
        match e.get_left().which().unwrap() {
            expression::left::Value(v) => Ok(v),
            expression::left::Expression(sub) => Err(sub.unwrap()),
        },
    );
    cce_side(
        out,
        match e.get_right().which().unwrap() {
            expression::right::Value(v) => Ok(v),
            expression::right::Expression(sub) => Err(sub.unwrap()),
        },
    );
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

// ---- golden values --------------------------------------------------------------------

#[test]
fn carsales_first_requests_match_golden() {
    let g = golden();
    let counts = numbers(&g["carsales"]["first_counts"]);
    let amounts = numbers(&g["carsales"]["first_amounts"]);
    let digest_requests = g["carsales"]["digest_requests"].as_u64().unwrap() as usize;
    let mut rng = FastRand::new();
    let mut hash = Sha256::new();
    for i in 0..counts.len() {
        let (request, amount) = round_trip::<CarSales>(&mut rng);
        let lot: parking_lot::Reader<'_> = request.get_root_as_reader().unwrap();
        let cars = lot.get_cars().unwrap();
        assert_eq!(i64::from(cars.len()), counts[i], "request {i}");
        assert_eq!(amount as i64, amounts[i], "request {i}");
        if i < digest_requests {
            let mut cce = cars.len().to_le_bytes().to_vec();
            for c in cars {
                cce_car(&mut cce, c);
            }
            hash.update(&cce);
        }
    }
    assert_eq!(
        hex(&hash.finalize()),
        g["carsales"]["sha256"].as_str().unwrap()
    );
}

#[test]
fn carsales_first_car_is_the_specs() {
    let mut rng = FastRand::new();
    let (request, _) = round_trip::<CarSales>(&mut rng);
    let lot: parking_lot::Reader<'_> = request.get_root_as_reader().unwrap();
    let c = lot.get_cars().unwrap().get(0);
    assert_eq!(c.get_make().unwrap(), "GM");
    assert_eq!(c.get_model().unwrap(), "Prius");
    assert_eq!(c.get_color().unwrap(), Color::Black);
    assert_eq!((c.get_seats(), c.get_doors()), (2, 4));
    let wheels: Vec<(u16, f32, bool)> = c
        .get_wheels()
        .unwrap()
        .iter()
        .map(|w| (w.get_diameter(), w.get_air_pressure(), w.get_snow_tires()))
        .collect();
    assert_eq!(
        wheels,
        [
            (34, 48.475872, false),
            (33, 46.546158, false),
            (36, 39.139904, false),
            (36, 32.082848, false)
        ]
    );
    assert_eq!(
        (
            c.get_length(),
            c.get_width(),
            c.get_height(),
            c.get_weight()
        ),
        (178, 72, 57, 3652)
    );
    let e = c.get_engine().unwrap();
    assert_eq!(
        (e.get_horsepower(), e.get_cylinders(), e.get_cc()),
        (12900, 8, 5195)
    );
    assert!(e.get_uses_gas() && e.get_uses_electric());
    assert_eq!(c.get_fuel_capacity(), 31.613008);
    assert_eq!(c.get_fuel_level(), 5.6485276);
    assert!(c.get_has_power_windows() && c.get_has_power_steering());
    assert!(c.get_has_cruise_control() && !c.get_has_nav_system());
    assert_eq!(c.get_cup_holders(), 8);
}

#[test]
fn catrank_first_requests_match_golden() {
    let g = golden();
    let counts = numbers(&g["catrank"]["first_counts"]);
    let good = numbers(&g["catrank"]["first_good"]);
    let digest_requests = g["catrank"]["digest_requests"].as_u64().unwrap() as usize;
    let mut rng = FastRand::new();
    let mut hash = Sha256::new();
    for i in 0..counts.len() {
        let (request, expected) = round_trip::<CatRank>(&mut rng);
        let list: search_result_list::Reader<'_> = request.get_root_as_reader().unwrap();
        let results = list.get_results().unwrap();
        assert_eq!(i64::from(results.len()), counts[i], "request {i}");
        assert_eq!(i64::from(expected), good[i], "request {i}");
        if i < digest_requests {
            let mut cce = results.len().to_le_bytes().to_vec();
            for r in results {
                text(&mut cce, r.get_url().unwrap());
                cce.extend(r.get_score().to_bits().to_le_bytes());
                text(&mut cce, r.get_snippet().unwrap());
            }
            hash.update(&cce);
        }
    }
    assert_eq!(
        hex(&hash.finalize()),
        g["catrank"]["sha256"].as_str().unwrap()
    );
}

#[test]
fn eval_first_requests_match_golden() {
    let g = golden();
    let values = numbers(&g["eval"]["first_values"]);
    let digest_requests = g["eval"]["digest_requests"].as_u64().unwrap() as usize;
    let mut rng = FastRand::new();
    let mut hash = Sha256::new();
    for i in 0..digest_requests.max(values.len()) {
        let (request, expected) = round_trip::<Eval>(&mut rng);
        if let Some(&value) = values.get(i) {
            assert_eq!(i64::from(expected), value, "request {i}");
        }
        if i < digest_requests {
            let mut cce = Vec::new();
            cce_expression(&mut cce, request.get_root_as_reader().unwrap());
            hash.update(&cce);
        }
    }
    assert_eq!(hex(&hash.finalize()), g["eval"]["sha256"].as_str().unwrap());
}
