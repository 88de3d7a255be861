/* carsales (SPEC §3.2): a parking lot of cars, answered with their total value. */
#ifndef CAPNP_BASELINE_CARSALES_H
#define CAPNP_BASELINE_CARSALES_H

#include "cases.h"

struct wheel {
    float air_pressure;
    uint16_t diameter;
    bool snow_tires;
};

struct engine {
    uint32_t cc;
    uint16_t horsepower;
    uint8_t cylinders;
    bool uses_gas;
    bool uses_electric;
};

struct car {
    struct text make, model;
    struct wheel *wheels;
    uint32_t wheel_count;
    uint32_t weight;
    float fuel_capacity, fuel_level;
    struct engine engine;
    uint16_t color; /* the Color enum's ordinal; any u16 is kept, as Cap'n Proto keeps it */
    uint16_t length, width, height;
    uint8_t seats, doors, cup_holders;
    bool has_power_windows, has_power_steering, has_cruise_control, has_nav_system;
};

struct parking_lot {
    struct car *cars;
    uint32_t count;
    size_t size; /* bytes of its CCE */
};

struct total_value {
    uint64_t amount;
};

/* The next request; *amount gets the total the server must answer. */
struct parking_lot *carsales_build(struct rng *rng, struct arena *a, uint64_t *amount);
/* One car's value, in wrapping u64 arithmetic on widened fields. */
uint64_t carsales_car_value(const struct car *car);
struct total_value *carsales_serve(const struct parking_lot *lot, struct arena *a);

void carsales_encode_request(const struct parking_lot *lot, uint8_t *out);
struct parking_lot *carsales_decode_request(struct cce *c, struct arena *a);
void carsales_encode_response(const struct total_value *total, uint8_t *out);
struct total_value *carsales_decode_response(struct cce *c, struct arena *a);

#define CARSALES_RESPONSE_SIZE 8

#endif
