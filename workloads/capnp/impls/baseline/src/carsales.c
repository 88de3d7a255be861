#include "carsales.h"

#include <inttypes.h>
#include <stdio.h>

#define T(s)                                                                                       \
    { s, sizeof s - 1 }
static const struct text MAKES[] = {T("Toyota"), T("GM"), T("Ford"), T("Honda"), T("Tesla")};
static const struct text MODELS[] = {T("Camry"),  T("Prius"), T("Volt"),
                                     T("Accord"), T("Leaf"),  T("Model S")};
#undef T

/* CCE bytes of a car around its texts and wheels: color, seats, doors, the wheels' count
 * (8), then length, width, height, weight, engine (2+1+4+1+1), fuel capacity and level, four
 * Bools and the cup holders (32). */
#define CAR_HEAD 8
#define CAR_TAIL 32
#define CAR_MIN (4 + 4 + CAR_HEAD + CAR_TAIL)
#define WHEEL_SIZE 7

static size_t car_size(const struct car *car) {
    return CAR_MIN + car->make.len + car->model.len + (size_t)car->wheel_count * WHEEL_SIZE;
}

/* The draws in exactly the SPEC's order: one statement each, since the order in which C
 * evaluates an initializer's or an expression's operands is unspecified. */
static void random_car(struct rng *rng, struct car *car, struct wheel *wheels) {
    car->make = MAKES[rng_rand(rng, 5)];
    car->model = MODELS[rng_rand(rng, 6)];
    car->color = (uint16_t)rng_rand(rng, 9);
    car->seats = (uint8_t)(2 + rng_rand(rng, 6));
    car->doors = (uint8_t)(2 + rng_rand(rng, 3));
    for (int i = 0; i < 4; i++) {
        wheels[i].diameter = (uint16_t)(25 + rng_rand(rng, 15));
        wheels[i].air_pressure = (float)(30 + rng_rand_double(rng, 20));
        wheels[i].snow_tires = rng_rand(rng, 16) == 0;
    }
    car->wheels = wheels;
    car->wheel_count = 4;
    car->length = (uint16_t)(170 + rng_rand(rng, 150));
    car->width = (uint16_t)(48 + rng_rand(rng, 36));
    car->height = (uint16_t)(54 + rng_rand(rng, 48));
    car->weight = (uint32_t)car->length * car->width * car->height / 200;
    car->engine.horsepower = (uint16_t)(100 * rng_rand(rng, 400));
    car->engine.cylinders = (uint8_t)(4 + 2 * rng_rand(rng, 3));
    car->engine.cc = 800 + rng_rand(rng, 10000);
    car->engine.uses_gas = true;
    car->engine.uses_electric = rng_rand(rng, 2) != 0;
    car->fuel_capacity = (float)(10 + rng_rand_double(rng, 30));
    car->fuel_level = (float)rng_rand_double(rng, (double)car->fuel_capacity);
    car->has_power_windows = rng_rand(rng, 2) != 0;
    car->has_power_steering = rng_rand(rng, 2) != 0;
    car->has_cruise_control = rng_rand(rng, 2) != 0;
    car->cup_holders = (uint8_t)rng_rand(rng, 12);
    car->has_nav_system = rng_rand(rng, 2) != 0;
}

struct parking_lot *carsales_build(struct rng *rng, struct arena *a, uint64_t *amount) {
    struct parking_lot *lot = arena_must(a, sizeof *lot);
    lot->count = rng_rand(rng, 200);
    lot->cars = arena_must(a, lot->count * sizeof *lot->cars);
    struct wheel *wheels = arena_must(a, 4 * lot->count * sizeof *wheels);
    lot->size = 4;
    uint64_t total = 0;
    for (uint32_t i = 0; i < lot->count; i++) {
        struct car *car = &lot->cars[i];
        random_car(rng, car, wheels + 4 * i);
        lot->size += car_size(car);
        total += carsales_car_value(car);
    }
    *amount = total;
    return lot;
}

uint64_t carsales_car_value(const struct car *car) {
    uint64_t v = (uint64_t)car->seats * 200 + (uint64_t)car->doors * 350;
    for (uint32_t i = 0; i < car->wheel_count; i++) {
        const struct wheel *w = &car->wheels[i];
        v += (uint64_t)w->diameter * w->diameter + (w->snow_tires ? 100 : 0);
    }
    v += (uint64_t)car->length * car->width * car->height / 50;
    v += (uint64_t)car->engine.horsepower * 40;
    if (car->engine.uses_electric)
        v += car->engine.uses_gas ? 5000 : 3000;
    v += car->has_power_windows ? 100 : 0;
    v += car->has_power_steering ? 200 : 0;
    v += car->has_cruise_control ? 400 : 0;
    v += car->has_nav_system ? 2000 : 0;
    v += (uint64_t)car->cup_holders * 25;
    return v;
}

struct total_value *carsales_serve(const struct parking_lot *lot, struct arena *a) {
    struct total_value *total = arena_alloc(a, sizeof *total);
    if (total == NULL)
        return NULL;
    uint64_t amount = 0;
    for (uint32_t i = 0; i < lot->count; i++)
        amount += carsales_car_value(&lot->cars[i]);
    total->amount = amount;
    return total;
}

static uint8_t *encode_car(const struct car *car, uint8_t *p) {
    p = put_text(p, car->make);
    p = put_text(p, car->model);
    p = put_u16(p, car->color);
    p = put_u8(p, car->seats);
    p = put_u8(p, car->doors);
    p = put_u32(p, car->wheel_count);
    for (uint32_t i = 0; i < car->wheel_count; i++) {
        const struct wheel *w = &car->wheels[i];
        p = put_u16(p, w->diameter);
        p = put_f32(p, w->air_pressure);
        p = put_u8(p, w->snow_tires);
    }
    p = put_u16(p, car->length);
    p = put_u16(p, car->width);
    p = put_u16(p, car->height);
    p = put_u32(p, car->weight);
    p = put_u16(p, car->engine.horsepower);
    p = put_u8(p, car->engine.cylinders);
    p = put_u32(p, car->engine.cc);
    p = put_u8(p, car->engine.uses_gas);
    p = put_u8(p, car->engine.uses_electric);
    p = put_f32(p, car->fuel_capacity);
    p = put_f32(p, car->fuel_level);
    p = put_u8(p, car->has_power_windows);
    p = put_u8(p, car->has_power_steering);
    p = put_u8(p, car->has_cruise_control);
    p = put_u8(p, car->cup_holders);
    return put_u8(p, car->has_nav_system);
}

void carsales_encode_request(const struct parking_lot *lot, uint8_t *out) {
    out = put_u32(out, lot->count);
    for (uint32_t i = 0; i < lot->count; i++)
        out = encode_car(&lot->cars[i], out);
}

/* Bools are read as bytes, OR-ed together and checked once per struct: anything but 0 or 1
 * is not CCE. */
static bool decode_car(struct cce *c, struct arena *a, struct car *car) {
    if (!cce_text(c, &car->make, "a car's make") || !cce_text(c, &car->model, "a car's model") ||
        !cce_need(c, 4, "a car"))
        return false;
    car->color = cce_u16(c);
    car->seats = cce_u8(c);
    car->doors = cce_u8(c);
    uint32_t n;
    if (!cce_count(c, WHEEL_SIZE, &n, "a car's wheels"))
        return false;
    car->wheel_count = n;
    car->wheels = NULL;
    unsigned bools = 0;
    if (n > 0) {
        car->wheels = arena_alloc(a, n * sizeof *car->wheels);
        if (car->wheels == NULL)
            return cce_fail(c, "%u wheels pass the 64 MiB limit of a message's objects", n);
        for (uint32_t i = 0; i < n; i++) {
            struct wheel *w = &car->wheels[i];
            w->diameter = cce_u16(c);
            w->air_pressure = cce_f32(c);
            uint8_t snow = cce_u8(c);
            bools |= snow;
            w->snow_tires = snow;
        }
    }
    if (!cce_need(c, CAR_TAIL, "a car"))
        return false;
    car->length = cce_u16(c);
    car->width = cce_u16(c);
    car->height = cce_u16(c);
    car->weight = cce_u32(c);
    car->engine.horsepower = cce_u16(c);
    car->engine.cylinders = cce_u8(c);
    car->engine.cc = cce_u32(c);
    uint8_t gas = cce_u8(c), electric = cce_u8(c);
    car->fuel_capacity = cce_f32(c);
    car->fuel_level = cce_f32(c);
    uint8_t windows = cce_u8(c), steering = cce_u8(c), cruise = cce_u8(c);
    car->cup_holders = cce_u8(c);
    uint8_t nav = cce_u8(c);
    bools |= gas | electric | windows | steering | cruise | nav;
    if (bools > 1)
        return cce_fail(c, "a car has a Bool that is neither 0 nor 1");
    car->engine.uses_gas = gas;
    car->engine.uses_electric = electric;
    car->has_power_windows = windows;
    car->has_power_steering = steering;
    car->has_cruise_control = cruise;
    car->has_nav_system = nav;
    return true;
}

struct parking_lot *carsales_decode_request(struct cce *c, struct arena *a) {
    uint32_t n;
    if (!cce_count(c, CAR_MIN, &n, "the cars"))
        return NULL;
    struct parking_lot *lot = arena_alloc(a, sizeof *lot + n * sizeof *lot->cars);
    if (lot == NULL) {
        cce_fail(c, "%u cars pass the 64 MiB limit of a message's objects", n);
        return NULL;
    }
    lot->cars = (struct car *)(lot + 1);
    lot->count = n;
    for (uint32_t i = 0; i < n; i++)
        if (!decode_car(c, a, &lot->cars[i]))
            return NULL;
    lot->size = (size_t)(c->p - c->start);
    return cce_end(c) ? lot : NULL;
}

void carsales_encode_response(const struct total_value *total, uint8_t *out) {
    put_u64(out, total->amount);
}

struct total_value *carsales_decode_response(struct cce *c, struct arena *a) {
    if (!cce_need(c, 8, "the amount"))
        return NULL;
    struct total_value *total = arena_alloc(a, sizeof *total);
    if (total == NULL) {
        cce_fail(c, "no memory for the response");
        return NULL;
    }
    total->amount = cce_u64(c);
    return cce_end(c) ? total : NULL;
}

/* The table for the modes. */

static const void *build(struct rng *rng, struct arena *a, struct expected *expected) {
    return carsales_build(rng, a, &expected->amount);
}

static const void *serve(const void *request, struct arena *a) {
    return carsales_serve(request, a);
}

static size_t request_size(const void *request) {
    return ((const struct parking_lot *)request)->size;
}

static void encode_request(const void *request, uint8_t *out) {
    carsales_encode_request(request, out);
}

static size_t response_size(const void *response) {
    (void)response;
    return CARSALES_RESPONSE_SIZE;
}

static void encode_response(const void *response, uint8_t *out) {
    carsales_encode_response(response, out);
}

static const void *decode_request(struct cce *c, struct arena *a) {
    return carsales_decode_request(c, a);
}

static const void *decode_response(struct cce *c, struct arena *a) {
    return carsales_decode_response(c, a);
}

static bool check(const void *response, const struct expected *expected, char *why, size_t n) {
    uint64_t amount = ((const struct total_value *)response)->amount;
    if (amount == expected->amount)
        return true;
    snprintf(why, n, "amount %" PRIu64 " expected, %" PRIu64 " came", expected->amount, amount);
    return false;
}

const struct case_ops carsales_ops = {
    .name = "carsales",
    .build = build,
    .serve = serve,
    .request_size = request_size,
    .encode_request = encode_request,
    .response_size = response_size,
    .encode_response = encode_response,
    .decode_request = decode_request,
    .decode_response = decode_response,
    .check = check,
};
