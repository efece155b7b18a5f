-- The sample database the example connectors in config/connectors/ read: a small shop.
--   createdb shop && psql -d shop -f config/examples/shop.sql
-- (docker-compose.yml loads it into its Postgres on first start.)
CREATE TABLE customers (
  id         integer PRIMARY KEY,
  name       text NOT NULL,
  email      text UNIQUE,
  country    char(2) NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE orders (
  id          bigint PRIMARY KEY,
  customer_id integer NOT NULL REFERENCES customers (id),
  status      text NOT NULL DEFAULT 'NEW',
  amount      numeric(10, 2) NOT NULL,
  note        text,
  updated_at  timestamp NOT NULL DEFAULT now()
);

INSERT INTO customers (id, name, email, country) VALUES
  (1, 'Ada Lovelace', 'ada@example.com', 'GB'),
  (2, 'Grace Hopper', 'grace@example.com', 'US'),
  (3, 'Emmy Noether', 'emmy@example.com', 'DE');

INSERT INTO orders (id, customer_id, status, amount, note) VALUES
  (1001, 1, 'PAID', 25.50, NULL),
  (1002, 2, 'NEW', 120.00, 'gift wrap'),
  (1003, 3, 'SHIPPED', 9.99, NULL),
  (1004, 1, 'NEW', 42.00, NULL);
