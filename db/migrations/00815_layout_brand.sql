-- +goose Up
-- A layout's header and footer (HTML fragments the frame places with {{header}}
-- and {{footer}}, or just before and after {{content}} when it names neither)
-- and its brand colours (#rrggbb, '' for none): the frame reads them as
-- {{brand.primary}}, {{brand.background}}, {{brand.text}} and {{brand.link}},
-- and block designs framed in it take them as their default colours.
ALTER TABLE layouts
    ADD COLUMN header           text NOT NULL DEFAULT '',
    ADD COLUMN footer           text NOT NULL DEFAULT '',
    ADD COLUMN brand_primary    text NOT NULL DEFAULT '' CHECK (brand_primary ~ '^(#[0-9a-f]{6})?$'),
    ADD COLUMN brand_background text NOT NULL DEFAULT '' CHECK (brand_background ~ '^(#[0-9a-f]{6})?$'),
    ADD COLUMN brand_text       text NOT NULL DEFAULT '' CHECK (brand_text ~ '^(#[0-9a-f]{6})?$'),
    ADD COLUMN brand_link       text NOT NULL DEFAULT '' CHECK (brand_link ~ '^(#[0-9a-f]{6})?$');

-- +goose Down
ALTER TABLE layouts
    DROP COLUMN brand_link,
    DROP COLUMN brand_text,
    DROP COLUMN brand_background,
    DROP COLUMN brand_primary,
    DROP COLUMN footer,
    DROP COLUMN header;
